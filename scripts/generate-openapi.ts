/**
 * Writes `openapi/robots-v2.yaml` from the robot operation table and its schemas. Run after
 * changing a robot operation or a robot payload schema: `npm run generate:openapi`.
 */
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROBOTS_OPENAPI_FILE, renderRobotsOpenApi } from '../src/upstream/operations/openapi.js';

const file = resolve(dirname(fileURLToPath(import.meta.url)), '..', ROBOTS_OPENAPI_FILE);
writeFileSync(file, renderRobotsOpenApi());
console.log(`wrote ${ROBOTS_OPENAPI_FILE}`);
