import{d as r}from"./index-DSgSyX4e.js";var a=r();export{a as r};
