import{d as r}from"./index-Qx7_pYWe.js";var a=r();export{a as r};
