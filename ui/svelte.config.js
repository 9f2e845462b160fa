// Svelte compiler options; TypeScript in components is preprocessed by vite-plugin-svelte.
import { vitePreprocess } from "@sveltejs/vite-plugin-svelte";

export default {
  preprocess: vitePreprocess(),
  compilerOptions: {
    runes: true,
  },
};
