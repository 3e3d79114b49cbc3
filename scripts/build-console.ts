/**
 * Builds the web console (`console/`) into `dist/console/`: one ES module bundle (`app.js`, Preact
 * included), one stylesheet (`app.css`: `src/app.css` and every page's own, imported by the
 * modules) and `index.html`. Part of `npm run build`; the tests build it too when
 * it is missing or older than its sources (test/setup/console.ts). Nothing is fetched at run time.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_SOURCE = resolve(ROOT, 'console');
export const CONSOLE_OUT = resolve(ROOT, 'dist', 'console');

export async function buildConsole(outDir = CONSOLE_OUT): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: {
      app: resolve(CONSOLE_SOURCE, 'src', 'main.tsx'),
    },
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    sourcemap: 'linked',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: outDir,
    logLevel: 'warning',
    legalComments: 'linked',
  });
  copyFileSync(resolve(CONSOLE_SOURCE, 'index.html'), resolve(outDir, 'index.html'));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole();
  console.log('built dist/console');
}
