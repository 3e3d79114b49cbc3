/**
 * Writes the published event JSON Schemas to `schemas/` (one file per event type plus
 * `index.json`) and removes files of types that no longer exist. Run after changing the event
 * catalogue: `npx tsx scripts/generate-schemas.ts`.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSchemaFiles, SCHEMA_DIRECTORY } from '../src/events/schema-publication.js';

const directory = resolve(dirname(fileURLToPath(import.meta.url)), '..', SCHEMA_DIRECTORY);
mkdirSync(directory, { recursive: true });

const files = renderSchemaFiles();
const wanted = new Set(files.map((file) => file.name));
for (const name of readdirSync(directory)) {
  if (name.endsWith('.json') && !wanted.has(name)) rmSync(join(directory, name));
}
for (const file of files) writeFileSync(join(directory, file.name), file.content);
console.log(`wrote ${files.length} files to ${SCHEMA_DIRECTORY}/`);
