import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * ARCHITECTURE.md is the contract between the parts, so what it says about the tree is checked
 * against the tree: its layer table against the import rules, its folder paragraphs against
 * src/, its numbered guarantees against every "Guarantee N" the code and tests cite, and every
 * Markdown file the repository cites against the files that exist.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const architecture = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
const { LAYERS } = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
  LAYERS: string[][];
};

function filesUnder(folder: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, folder))) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

/** The rows of the "Layers and folders" table: rank → module names. */
function layerTable(): Map<number, string[]> {
  const rows = new Map<number, string[]>();
  for (const match of architecture.matchAll(/^\| (\d+) \| (.+) \|$/gm)) {
    const names = [...(match[2] ?? '').matchAll(/`([^`]+)`/g)].map((name) => name[1] ?? '');
    rows.set(Number(match[1]), names);
  }
  return rows;
}

describe('ARCHITECTURE.md', () => {
  it('has the layer table of the import rules (.dependency-cruiser.cjs LAYERS)', () => {
    const table = layerTable();
    expect([...table.keys()].sort((a, b) => a - b)).toEqual(LAYERS.map((_, rank) => rank));
    LAYERS.forEach((modules, rank) => {
      expect(table.get(rank)?.sort(), `layer ${rank}`).toEqual([...modules].sort());
    });
  });

  it('gives every folder of src/ a paragraph', () => {
    const folders = new Set(
      filesUnder('src', (path) => path.endsWith('.ts')).map((file) => {
        const parts = relative('src', file).split('/');
        if (parts.length === 1) return undefined;
        // notifiers/ is a folder of concepts: each gets its own paragraph (the receiver kinds one together).
        if (parts[0] === 'notifiers' && parts.length > 2) {
          return parts[1] === 'receivers' ? 'notifiers/receivers/<kind>' : `notifiers/${parts[1]}`;
        }
        return parts[0];
      }),
    );
    folders.delete(undefined);
    for (const folder of folders) {
      expect(architecture, `a paragraph on src/${folder}/`).toContain(`**\`${folder}/\`**`);
    }
  });

  it('defines every guarantee the code and the tests cite', () => {
    const defined = new Set([...architecture.matchAll(/^(\d+)\. \*\*/gm)].map((match) => Number(match[1])));
    const sources = filesUnder('src', (path) => path.endsWith('.ts')).concat(
      filesUnder('test', (path) => path.endsWith('.ts')),
    );
    const cited = new Map<number, string>();
    for (const file of sources) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/\bguarantee (\d+)\b/gi)) cited.set(Number(match[1]), file);
    }
    expect(cited.size).toBeGreaterThan(0);
    for (const [number, file] of cited) {
      expect(defined.has(number), `Guarantee ${number}, cited in ${file}`).toBe(true);
    }
  });

  it('is the only design document the repository cites, and every cited Markdown file exists', () => {
    const files = filesUnder('.', (path) => /\.(ts|md|ya?ml|cjs)$/.test(path));
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/\b([A-Z][A-Z0-9_-]+\.md)\b/g)) {
        const cited = match[1] ?? '';
        expect(
          files.some((path) => path.endsWith(cited)),
          `${file} cites ${cited}, which is not in the repository`,
        ).toBe(true);
      }
    }
  });
});
