// The theme before the first paint, so that a dark page does not flash white.
try {
  var t = localStorage.getItem("trellis.theme");
  if (t === "dark" || (!t && matchMedia("(prefers-color-scheme: dark)").matches)) document.documentElement.classList.add("dark");
} catch (e) {}
