import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { draft, EVENT, FLEET_EVENT_TYPES } from '../../src/events/catalogue.js';
import { toFleetEvent } from '../../src/events/cloud-event.js';
import { GENERATOR, renderSchemaFiles, SCHEMA_DIRECTORY } from '../../src/events/schema-publication.js';

const directory = join(import.meta.dirname, '..', '..', SCHEMA_DIRECTORY);
const hint = `the committed ${SCHEMA_DIRECTORY}/ is out of date: run \`npx tsx ${GENERATOR}\` and commit the result`;

describe('published JSON Schemas', () => {
  const rendered = renderSchemaFiles();

  it('renders one draft 2020-12 schema per event type plus index.json', () => {
    expect(rendered.map((file) => file.name).sort()).toEqual(
      [...FLEET_EVENT_TYPES.map((type) => `${type}.json`), 'index.json'].sort(),
    );
    for (const file of rendered.filter((f) => f.name !== 'index.json')) {
      expect(JSON.parse(file.content).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
    expect(renderSchemaFiles()).toEqual(rendered);
  });

  it('matches the committed files exactly', () => {
    expect(existsSync(directory), hint).toBe(true);
    const committed = readdirSync(directory)
      .filter((name) => name.endsWith('.json'))
      .sort();
    expect(committed, hint).toEqual(rendered.map((file) => file.name));
    for (const file of rendered) {
      expect(readFileSync(join(directory, file.name), 'utf8'), `${file.name}: ${hint}`).toBe(file.content);
    }
  });

  it('describes an event fleetwatch builds (spot check without a JSON Schema validator)', () => {
    const schema = JSON.parse(
      rendered.find((file) => file.name === 'vehicle.vpn.connected.json')?.content ?? '{}',
    );
    const event = toFleetEvent(
      draft(EVENT.vpnConnected, {
        previous: 'disconnected',
        current: 'connected',
        since: '2025-03-01T12:00:00.000Z',
        durationMs: 1000,
      }),
      { id: 'e', source: 'fleetwatch/x', time: '2025-03-01T12:01:00.000Z', entityId: 'v-1' },
    );
    expect(Object.keys(event).sort()).toEqual([...schema.required].sort());
    expect(Object.keys(event.data).sort()).toEqual([...schema.properties.data.required].sort());
    expect(schema.properties.data.additionalProperties).toBeUndefined();
    expect(schema.properties.type.const).toBe('vehicle.vpn.connected');
  });
});
