// The UI's unit tests (`npm test`): the state modules' own logic, with the Tauri IPC mocked.
// The build's config (the Svelte plugin) is reused so `.svelte.ts` modules compile their runes
// exactly as they do for the app.
import { defineConfig, mergeConfig } from "vitest/config";
import viteConfig from "./vite.config";

export default mergeConfig(
  viteConfig,
  defineConfig({
    // The app runs Svelte's client runtime: load that one, not the server build Node would get.
    resolve: { conditions: ["browser"] },
    test: {
      include: ["src/**/*.test.ts"],
      // Most tests need no DOM; a file that does says so itself (`@vitest-environment jsdom`).
      environment: "node",
      // Compile the modules under test as the webview gets them (client output), not as SSR.
      testTransformMode: { web: ["**/*.test.ts"] },
    },
  }),
);
