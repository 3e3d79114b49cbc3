import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_OPERATIONS, robotRoutePath } from '../../src/http/routes/robots.js';
import { type AppHarness, appHarness, TOKEN } from './helpers.js';

/**
 * `/openapi.json` is a valid OpenAPI 3.1 document that lists every route the server registers
 * (read from fastify's own route tree, not from the collector that builds the document), and
 * `/docs` shows it without fetching anything from elsewhere.
 */

let a: AppHarness;
let document: {
  openapi: string;
  paths: Record<string, Record<string, Record<string, unknown>>>;
  tags: Array<{ name: string }>;
  components: { securitySchemes: Record<string, { in?: string; name?: string }> };
};

beforeAll(async () => {
  a = await appHarness({ token: TOKEN });
  const response = await a.app.inject('/openapi.json');
  expect(response.statusCode).toBe(200);
  document = response.json();
});
afterAll(async () => {
  await a.close();
});

/** `METHOD /path/{}` for every route in fastify's printed tree (parameters unnamed: the tree merges names). */
function registeredRoutes(tree: string): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    if (!match[3]) continue;
    const path = stack.join('').replace(/:[\w|:]+/g, '{}');
    for (const method of match[3].split(', ')) routes.add(`${method} ${path}`);
  }
  return routes;
}

const documented = () =>
  new Set(
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{\w+\}/g, '{}')}`),
    ),
  );

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every route the server registers, each documented', () => {
    const registered = registeredRoutes(a.app.printRoutes({ commonPrefix: false }));
    // HEAD answers like its GET; the queue UI's own pages, assets and JSON stand as one entry.
    const expected = [...registered].filter(
      (route) => !route.startsWith('HEAD ') && !/^[A-Z]+ \/admin\/queues./.test(route),
    );
    expect(expected.length).toBeGreaterThan(GATEWAY_OPERATIONS.length);
    expect(expected.filter((route) => !documented().has(route))).toEqual([]);
    expect([...documented()].filter((route) => !registered.has(route))).toEqual([]);
    expect(document.tags.map((tag) => tag.name)).not.toContain('Undocumented');
  });

  it('has every robot operation with its parameters, body, answers and destructive mark', () => {
    for (const row of GATEWAY_OPERATIONS) {
      const path = robotRoutePath(row).replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[path]?.[row.method.toLowerCase()];
      expect(operation, `${row.method} ${path}`).toMatchObject({
        operationId: row.id,
        'x-destructive': row.destructive,
        security:
          row.method === 'GET'
            ? [{ bearerAuth: [] }, { sessionCookie: [] }]
            : [{ bearerAuth: [] }, { sessionCookie: [], csrfToken: [] }],
      });
      const parameters = (operation!['parameters'] ?? []) as Array<{ name: string; in: string }>;
      expect(parameters.filter((param) => param.in === 'path').map((param) => param.name)).toEqual(
        [...path.matchAll(/\{(\w+)\}/g)].map((found) => found[1]),
      );
      expect(Object.hasOwn(operation!, 'requestBody')).toBe(row.body !== 'none');
      expect(Object.keys(operation!['responses'] as object)).toEqual(
        expect.arrayContaining(['200', '404', '502']),
      );
    }
    const release = document.paths['/api/robots/{deviceId}/teleop-control/release']!['post']!;
    expect(release['parameters']).toContainEqual(
      expect.objectContaining({ name: 'force', in: 'query', required: false }),
    );
  });

  it("documents the routes' requests from the schemas they validate with", () => {
    const events = document.paths['/api/events']!['get']!;
    const limit = (events['parameters'] as Array<{ name: string; description?: string }>).find(
      (param) => param.name === 'limit',
    );
    expect(limit?.description).toMatch(/^a whole number between 1 and 10000/);
    const silences = document.paths['/api/silences']!['post']!;
    expect(JSON.stringify(silences['requestBody'])).toMatch(/matchers/);
    expect(document.paths['/healthz']!['get']!['security']).toEqual([]);
    expect(document.paths['/admin/queues']!['get']!['security']).toEqual([
      { bearerAuth: [] },
      { basicAuth: [] },
      { sessionCookie: [] },
    ]);
    // The reload refuses Basic credentials and needs the CSRF header with the cookie.
    const reload = document.paths['/-/reload']!['post']!;
    expect(reload['security']).toEqual([{ bearerAuth: [] }, { sessionCookie: [], csrfToken: [] }]);
    expect(reload['description']).toMatch(/not Basic/);
    // The login and its cookie are described, with the CSRF header a cookie's change needs.
    expect(document.paths['/api/session']!['post']!['requestBody']).toBeDefined();
    const schemes = document.components.securitySchemes;
    expect(schemes['sessionCookie']).toMatchObject({ in: 'cookie', name: 'fleetwatch_session' });
    expect(schemes['csrfToken']).toMatchObject({ in: 'header', name: 'X-CSRF-Token' });
  });
});

describe('GET /docs', () => {
  it('is one self-contained page listing every operation', async () => {
    const response = await a.app.inject('/docs');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const page = response.body;
    for (const path of Object.keys(document.paths)) {
      expect(page).toContain(`<code>${path.replace(/&/g, '&amp;')}</code>`);
    }
    // Nothing to fetch: no script, no stylesheet or image from elsewhere.
    expect(page).not.toMatch(/<script|<link|src=|href="https?:/i);
    expect(page).toContain('destructive');
  });
});
