import{d as r}from"./index-DtxZ-4sw.js";var a=r();export{a as r};
