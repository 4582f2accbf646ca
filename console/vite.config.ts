// The operator console: built once at install time (npm run build:console) into console/dist, served by the
// engine at /console (wiring/console.mount.ts). Everything is bundled: no CDN at run time.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  // Preact's automatic JSX runtime through Vite's own transformer (no preset plugin needed).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The hardening CSP allows no inline script or style: keep every asset a file, never a data: URI.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
  },
  logLevel: 'warn',
});
