import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import tailwindcss from "@tailwindcss/vite";

// The UI is served by trellis under /ui/ (and its index also at /). The build is reproducible:
// content-hashed file names, no source maps, nothing that depends on the time or the machine.
export default defineConfig({
  base: "/ui/",
  plugins: [react(), tailwindcss()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: Object.fromEntries(
      ["/info", "/apps", "/assistants", "/threads", "/runs", "/store", "/ui/config.json"].map((p) => [p, "http://127.0.0.1:2024"]),
    ),
  },
});
