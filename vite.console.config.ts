import path from 'node:path';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/*
 * The agent console's build (docs/console.md): `npm run build` runs it after tsc and writes
 * dist/console, which the service serves at /app. A test may pass `--outDir` to build elsewhere.
 */
const root = path.join(import.meta.dirname, 'src', 'console');

export default defineConfig({
  root,
  base: '/app/',
  plugins: [preact()],
  logLevel: 'warn',
  clearScreen: false,
  build: {
    outDir: path.join(import.meta.dirname, 'dist', 'console'),
    emptyOutDir: true,
    target: 'es2022',
    // The CSP allows no inline script or style, and no data: fonts or scripts: every asset is a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
