import{d as r}from"./index-icek3ulK.js";var a=r();export{a as r};
