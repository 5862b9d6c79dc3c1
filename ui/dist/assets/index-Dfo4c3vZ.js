import{d as r}from"./index-D2IKPMNc.js";var a=r();export{a as r};
