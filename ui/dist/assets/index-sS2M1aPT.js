import{d as r}from"./index-k25ACJLP.js";var a=r();export{a as r};
