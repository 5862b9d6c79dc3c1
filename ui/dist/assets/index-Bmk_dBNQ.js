import{d as r}from"./index-DSsn0OW6.js";var a=r();export{a as r};
