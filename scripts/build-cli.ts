/**
 * Builds the command (`fleetwatch run` and every other) into `dist/bin/`: one minified ES module,
 * `fleetwatch.js`, with the libraries it loads at start inside it, and chunks for what is loaded at
 * first use (the simulator, the demo, the OpenAPI page). `bin/fleetwatch.js` runs it. Part of
 * `npm run build`; the tests build it too before they start (test/setup/cli.ts).
 *
 * Why a bundle: V8 keeps the source text of every module it loads. Run from the compiled files
 * and node_modules, an idle daemon held about 12 MB of source text (BullMQ alone brings its unused
 * PostgreSQL, Bun, Valkey and node-redis backends; undici its fetch, WebSocket and cache), and
 * about 10 MB more of its heap went with them. Bundled and minified, with BullMQ's unused modules
 * left out, the heap of an idle daemon is about a quarter smaller (BENCHMARKS.md, *Idle memory*).
 */
import { readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI_ENTRY = resolve(ROOT, 'src', 'cli', 'run.ts');
export const CLI_OUT = resolve(ROOT, 'dist', 'bin');
/** The poll thread's code (`worker.poll_thread`): an entry of its own, sharing the chunks. */
export const POLL_THREAD_ENTRY = resolve(ROOT, 'src', 'daemon', 'poll-thread.ts');

/**
 * Left to node_modules at run time: Bull Board serves its page's files from its own package folder,
 * and pino-pretty is required by name where it is used (src/log/logger.ts).
 */
export const FROM_NODE_MODULES = ['@bull-board/*', 'pino-pretty'];

/**
 * BullMQ's ES modules have no side effects on import, but its package does not say so, so a
 * bundler keeps every module its index names: the queue backends fleetwatch never uses (PostgreSQL
 * among them, 400 KB of source) would be loaded at every start. Declaring them side-effect free
 * lets the bundle keep only what is used.
 */
const bullmqWithoutSideEffects: Plugin = {
  name: 'bullmq-without-side-effects',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'inner' || !/bullmq/.test(`${args.importer} ${args.path}`)) return undefined;
      const resolved = await builder.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: 'inner',
      });
      if (
        resolved.errors.length > 0 ||
        !/[\\/]node_modules[\\/]bullmq[\\/]dist[\\/]esm[\\/]/.test(resolved.path)
      )
        return undefined;
      return { ...resolved, sideEffects: false };
    });
  },
};

/** Builds the bundle; its metafile says what it imports from outside itself. */
export async function buildCli(outDir = CLI_OUT): Promise<Metafile> {
  const result = await build({
    entryPoints: { fleetwatch: CLI_ENTRY, 'poll-thread': POLL_THREAD_ENTRY },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: ['node20.18'],
    // The ES module builds, where a package has both: only those can be trimmed to what is used.
    mainFields: ['module', 'main'],
    splitting: true,
    minify: true,
    sourcemap: 'linked',
    outdir: outDir,
    chunkNames: 'chunks/[name]-[hash]',
    external: FROM_NODE_MODULES,
    metafile: true,
    plugins: [bullmqWithoutSideEffects],
    // CommonJS code inside an ES module bundle still calls `require` for Node's own modules.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    legalComments: 'linked',
    logLevel: 'warning',
  });
  await removeStaleChunks(outDir, result.metafile);
  return result.metafile;
}

/**
 * Chunk names carry their content's hash, so every change leaves the previous build's chunks
 * behind; removed after the build (not before, so a daemon running from the folder never finds
 * a chunk it loads at first use missing while the build runs).
 */
async function removeStaleChunks(outDir: string, metafile: Metafile): Promise<void> {
  const built = new Set(Object.keys(metafile.outputs).map((output) => resolve(output)));
  const chunks = join(outDir, 'chunks');
  const names = await readdir(chunks).catch(() => [] as string[]);
  await Promise.all(
    names
      .map((name) => join(chunks, name))
      .filter((path) => !built.has(resolve(path)))
      .map((path) => rm(path, { force: true })),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildCli();
  console.log('built dist/bin');
}
