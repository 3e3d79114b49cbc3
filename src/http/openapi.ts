import { z } from 'zod';
import { SCHEMA_NAMES as ROBOT_SCHEMA_NAMES } from '../upstream/operations/openapi.js';
import type { Access } from './auth.js';
import type { RegisteredRoute, ResponseDoc, RouteDoc } from './route-doc.js';

/**
 * fleetwatch's own OpenAPI 3.1 document, built once per server from the routes it registered
 * (`RouteDocs`) and the doc each carries (`config.doc`): paths, parameters and bodies from the
 * zod schemas the handlers parse with (`z.toJSONSchema`, JSON Schema 2020-12 as OpenAPI 3.1 takes
 * it), answers, and security from each route's access. The robot gateway's payload schemas are
 * components under the names `openapi/robots-v2.yaml` gives them.
 */

export type OpenApiDocument = Record<string, unknown>;
type Json = Record<string, unknown>;

/** The error shape of every failure (errors.ts). */
export const errorBodySchema = z.object({
  error: z.object({
    code: z
      .string()
      .describe('Stable, machine-readable: `bad_request`, `not_found`, `upstream_forbidden`, ...'),
    message: z.string().describe('One line for people; names the field of a bad request'),
    details: z.unknown().optional().describe('More, where there is more: `problems`, `upstreamStatus`, ...'),
  }),
});

const COMPONENT_NAMES = new Map<z.ZodType, string>([...ROBOT_SCHEMA_NAMES, [errorBodySchema, 'Error']]);

/**
 * Security schemes. A route's access (auth.ts) says which apply: `open` needs none, `read` and
 * `write` the bearer token (reads are open while no `http.api_token` is configured), `admin`
 * (the queue UI) the token as bearer or as the Basic password. A new scheme (a session cookie,
 * say) is one entry here and its place in `SECURITY`.
 */
const SECURITY_SCHEMES: Json = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: '`Authorization: Bearer <token>`: `http.api_token` (role admin) or one of `http.tokens`',
  },
  basicAuth: {
    type: 'http',
    scheme: 'basic',
    description: 'The queue UI only: any user name, a token of role admin as the password',
  },
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'fleetwatch_session',
    description:
      'The session cookie `POST /api/session` sets; it carries the role of the token that logged in',
  },
  csrfToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-CSRF-Token',
    description: "With the session cookie, a change needs the session's CSRF token (`GET /api/session`)",
  },
};

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  open: [],
  read: [{ bearerAuth: [] }, { sessionCookie: [] }],
  write: [{ bearerAuth: [] }, { sessionCookie: [], csrfToken: [] }],
  admin: [{ bearerAuth: [] }, { basicAuth: [] }, { sessionCookie: [] }],
};

const ACCESS_WORDS: Record<Access, string> = {
  open: 'Open: no token.',
  read: 'Needs a token of any role (or its session) once a token is configured; open while none is.',
  write:
    'Needs a token of role operate or admin (or its session, with the CSRF header); refused (403) while no token is configured.',
  admin: 'Needs a token of role admin (bearer, the Basic password in a browser, or its session).',
};

/**
 * An admin change (`POST /-/reload`) takes neither Basic credentials (a browser resends cached
 * ones with any page's form) nor the cookie without its CSRF header; only the queue UI's reads do.
 */
const ADMIN_CHANGE_SECURITY = [{ bearerAuth: [] }, { sessionCookie: [], csrfToken: [] }];
const ADMIN_CHANGE_WORDS =
  'Needs a token of role admin: bearer, or its session with the CSRF header (not Basic credentials).';

function isAdminChange(route: RegisteredRoute): boolean {
  return route.access === 'admin' && !['GET', 'HEAD'].includes(route.method.toUpperCase());
}

const DESCRIPTION = `The HTTP API of fleetwatch: the fleet as last observed, events and their live stream,
incidents, silences, dead letters, receivers, vehicle power, and every operation of the robot
gateway passed on to one robot.

Errors are \`{"error": {"code", "message", "details"?}}\`. Robot reads answer
\`{deviceId, operation, live, snapshot}\` (\`live\`: the robot's answer now; \`snapshot\`: what
fleetwatch last stored of that facet, or null), robot writes \`{deviceId, operation, live}\`.

Generated from the routes the server registers and the schemas they validate with.`;

type Io = 'input' | 'output';

const toJson = (schema: z.ZodType, io: Io): Json => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return json;
};

/**
 * Converts zod schemas; where a named schema's JSON comes out (whole, or inside another), it
 * becomes a component referred to by `$ref`. Matched by its JSON, which `z.toJSONSchema` renders
 * the same wherever the schema stands.
 */
class Schemas {
  readonly components = new Map<string, unknown>();
  readonly #named = new Map<string, { name: string; json: Json }>();

  constructor() {
    for (const [schema, name] of COMPONENT_NAMES) {
      for (const io of ['input', 'output'] as const) {
        const json = toJson(schema, io);
        this.#named.set(JSON.stringify(json), { name, json });
      }
    }
  }

  json(schema: z.ZodType, io: Io): Json {
    return this.#refs(toJson(schema, io)) as Json;
  }

  #refs(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((item) => this.#refs(item));
    if (typeof node !== 'object' || node === null) return node;
    const named = this.#named.get(JSON.stringify(node));
    if (named) {
      if (!this.components.has(named.name)) this.components.set(named.name, named.json);
      return { $ref: `#/components/schemas/${named.name}` };
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, this.#refs(value)]));
  }
}

/** `/api/robots/:deviceId/sites/:name` → `/api/robots/{deviceId}/sites/{name}`. */
export function openApiPath(url: string): string {
  const trimmed = url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
  return trimmed.replace(/:(\w+)/g, '{$1}');
}

function operationIdOf(method: string, path: string): string {
  const words = `${method.toLowerCase()} ${path}`.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return words.map((word, i) => (i === 0 ? word : word[0]!.toUpperCase() + word.slice(1))).join('');
}

function parametersOf(
  schemas: Schemas,
  where: 'path' | 'query',
  object: z.ZodObject | undefined,
  names: readonly string[],
): Json[] {
  const json = object ? schemas.json(object, 'input') : { properties: {} };
  const properties = (json['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((json['required'] ?? []) as string[]);
  const all = [...new Set([...names, ...Object.keys(properties)])];
  return all.map((name) => {
    const { description, ...schema } = properties[name] ?? { type: 'string' };
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema,
    };
  });
}

function responseOf(schemas: Schemas, status: number, given: ResponseDoc | string): Json {
  const doc = typeof given === 'string' ? { description: given } : given;
  const type = doc.type ?? 'application/json';
  const schema = doc.schema
    ? schemas.json(doc.schema, 'output')
    : status >= 400
      ? schemas.json(errorBodySchema, 'output')
      : type === 'application/json'
        ? {}
        : { type: 'string' };
  return { description: doc.description, content: { [type]: { schema } } };
}

const STANDARD_ANSWERS: Record<number, string> = {
  400: 'The request is not valid: the message names the field, `details.problems` lists them all',
  401: 'No API token, or not the configured one',
  403: 'Changes are refused while no `http.api_token` is configured',
  500: 'A fault of fleetwatch (the details are in its log)',
};

function operationOf(schemas: Schemas, route: RegisteredRoute, doc: RouteDoc, path: string): Json {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const parameters = [
    ...parametersOf(schemas, 'path', doc.params, names),
    ...(doc.query ? parametersOf(schemas, 'query', doc.query, []) : []),
  ];
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(doc.responses)) {
    responses[status] = responseOf(schemas, Number(status), answer);
  }
  const validates = doc.params || doc.query || doc.body;
  const extra: number[] = [...(validates ? [400] : []), ...(route.access === 'open' ? [] : [401, 403]), 500];
  for (const status of extra) responses[status] ??= responseOf(schemas, status, STANDARD_ANSWERS[status]!);
  const operation: Json = {
    operationId: doc.operationId ?? operationIdOf(route.method, path),
    summary: doc.summary,
    description: [doc.description, isAdminChange(route) ? ADMIN_CHANGE_WORDS : ACCESS_WORDS[route.access]]
      .filter(Boolean)
      .join('\n\n'),
    tags: [doc.tag],
    security: isAdminChange(route) ? ADMIN_CHANGE_SECURITY : SECURITY[route.access],
    'x-access': route.access,
  };
  if (parameters.length > 0) operation['parameters'] = parameters;
  if (doc.body) {
    operation['requestBody'] = {
      required: doc.body.required,
      ...(doc.body.description ? { description: doc.body.description } : {}),
      content: { 'application/json': { schema: schemas.json(doc.body.schema, 'input') } },
    };
  }
  operation['responses'] = responses;
  return { ...operation, ...doc.extensions };
}

/** A route registered without its doc: listed, so that nothing is hidden, and said to be undocumented. */
function undocumented(route: RegisteredRoute): RouteDoc {
  return {
    summary: `${route.method} ${openApiPath(route.url)}`,
    description: 'Not documented yet.',
    tag: 'Undocumented',
    responses: { 200: 'Success' },
  };
}

export interface OpenApiOptions {
  version: string;
  /** The installation's name, in the title. */
  installation: string;
}

/** The document of `routes` (each method and path once; HEAD left out). */
export function buildOpenApi(routes: readonly RegisteredRoute[], options: OpenApiOptions): OpenApiDocument {
  const schemas = new Schemas();
  const paths: Record<string, Record<string, Json>> = {};
  const tags: string[] = [];
  for (const route of routes) {
    if (route.method === 'HEAD') continue;
    const path = openApiPath(route.url);
    const doc = route.doc ?? undocumented(route);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(schemas, route, doc, path);
    if (!tags.includes(doc.tag)) tags.push(doc.tag);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `fleetwatch API (${options.installation})`,
      version: options.version,
      description: DESCRIPTION,
    },
    security: SECURITY.read,
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: Object.fromEntries([...schemas.components].sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}
