import{d as r}from"./index-C46-dBGN.js";var a=r();export{a as r};
