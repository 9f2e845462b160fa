// Builds the webview into ui/dist, which countersign-desktop embeds at compile time
// (tauri.conf.json `frontendDist`). There is no dev server: the app always loads the build.
import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  plugins: [svelte()],
  // Tauri serves the files itself; a clean dist avoids shipping stale chunks.
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // WebKitGTK on Debian 12 (2.4x+) and WebView2 both run modern JavaScript.
    target: "es2022",
    // Inline data: URIs are allowed by the CSP only for images; keep everything else as files.
    assetsInlineLimit: 0,
  },
  clearScreen: false,
});
