import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// One build serves both the Wails window and `proscenium serve --ui`.
export default defineConfig({
  plugins: [svelte()],
  // Vitest mounts components in happy-dom: use Svelte's browser build there.
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The timing report is noise on a shared 2-core machine.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.ts'],
  },
});
