import { stringify } from 'yaml';
import { z } from 'zod';
import {
  leaseTransferRequestSchema,
  motionCommandRequestSchema,
  platformFeedbackResponseSchema,
  robotEnvelopeSchema,
  robotErrorSchema,
  robotHealthSchema,
  robotListSchema,
  robotUuidResponseSchema,
  teleopStatusResponseSchema,
} from '../schemas/robot.js';
import { ROBOT_OPERATIONS } from './robot.js';
import { DEVICE_ID_PARAM, type Operation, type OperationParam, paramsOf, pathOf } from './types.js';

/**
 * Renders `openapi/robots-v2.yaml`, the machine-readable contract of the robot-level interface,
 * from the operation table and its zod schemas (`npm run generate:openapi` writes it; a test
 * checks that the committed file is what this renders). Where the spec is silent the document is
 * lenient: objects allow unknown properties, bodies without a known shape are free objects, any
 * 2xx is success and an error may come with any status.
 */

export const ROBOTS_OPENAPI_FILE = 'openapi/robots-v2.yaml';

/**
 * Component names of the schemas rows use; a row with a schema not named here fails to render.
 * fleetwatch's own API document (src/http/openapi.ts) names them the same.
 */
export const SCHEMA_NAMES: ReadonlyMap<z.ZodType, string> = new Map<z.ZodType, string>([
  [robotListSchema, 'RobotList'],
  [robotHealthSchema, 'RobotHealth'],
  [robotUuidResponseSchema, 'RobotUuidResponse'],
  [platformFeedbackResponseSchema, 'PlatformFeedbackResponse'],
  [teleopStatusResponseSchema, 'TeleopStatusResponse'],
  [robotEnvelopeSchema, 'RobotEnvelope'],
  [motionCommandRequestSchema, 'MotionCommandRequest'],
  [leaseTransferRequestSchema, 'LeaseTransferRequest'],
  [robotErrorSchema, 'RobotError'],
]);

const DESCRIPTION = `The robot-level interface of the vehicle and robot control service: the robot listing and
every endpoint of the spec's robot-level tables, addressed to one device through the gateway
\`/api/platform/{deviceId}\`, plus \`/v2/uuid\` (older robots' health check).

The spec gives no payloads, query parameters or statuses for this interface. Response shapes
follow robot-shapes.md and are lenient: every known field is optional (null reads as missing)
and unknown fields are allowed. Request bodies have a schema where robot-shapes.md gives one and
are free objects elsewhere. Any 2xx is success; errors may come with any status, with
\`{status: "error", message, error: {details}}\` or, for validation failures (422),
\`{detail: [{loc, msg, type}]}\`.

Generated from the operation table of fleetwatch (src/upstream/operations/robot.ts); do not edit.
Extensions: \`x-fleetwatch-method\` is the client method, \`x-fleetwatch-retry\` whether a failed
request is sent again (\`transient\`: reads, on 502/503/504, time-outs and network errors;
\`never\`: writes), \`x-fleetwatch-destructive\` marks operations that delete or stop something,
\`x-fleetwatch-resource\` what the operation acts on within the robot (what a \`{name}\` names).
`;

const JSON_SCHEMA_OPTIONS = { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' } as const;

const FREE_OBJECT = {
  type: 'object',
  description: 'Not given by the spec: any JSON object.',
  additionalProperties: true,
};

type Schemas = Map<string, unknown>;

function ref(schema: z.ZodType, schemas: Schemas): { $ref: string } {
  const name = SCHEMA_NAMES.get(schema);
  if (name === undefined) throw new Error('a schema of the robot operations has no component name');
  if (!schemas.has(name)) {
    const { $schema: _, ...json } = z.toJSONSchema(schema, JSON_SCHEMA_OPTIONS) as Record<string, unknown>;
    schemas.set(name, nullableBranches(json));
  }
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * Moves `nullable` from a union into its branches: OpenAPI 3.0 ties `nullable` to `type`, and
 * validators refuse it beside an `anyOf` alone (which is how an optional union comes out).
 */
function nullableBranches(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableBranches);
  if (typeof node !== 'object' || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, nullableBranches(value)]));
  if (nullable !== true) return out;
  if (out['type'] !== undefined || !Array.isArray(out['anyOf'])) return { nullable, ...out };
  return { ...out, anyOf: out['anyOf'].map((branch) => ({ nullable: true, ...(branch as object) })) };
}

function parameter(param: OperationParam): Record<string, unknown> {
  return {
    name: param.name,
    in: param.in,
    required: param.required,
    description: param.description,
    schema: { type: param.type },
  };
}

function operationObject(operation: Operation, schemas: Schemas): Record<string, unknown> {
  const parameters = paramsOf(operation)
    .filter((param) => param.in !== 'body')
    .map((param) =>
      param === DEVICE_ID_PARAM ? { $ref: '#/components/parameters/DeviceId' } : parameter(param),
    );
  const object: Record<string, unknown> = {
    operationId: operation.id,
    summary: operation.summary,
    tags: [operation.group],
    'x-fleetwatch-method': operation.name,
    'x-fleetwatch-retry': operation.retry,
    'x-fleetwatch-destructive': operation.destructive,
  };
  if (operation.resource) object['x-fleetwatch-resource'] = operation.resource;
  if (parameters.length) object['parameters'] = parameters;
  if (operation.body !== 'none') {
    object['requestBody'] = {
      required: operation.body === 'required',
      content: {
        'application/json': { schema: operation.request ? ref(operation.request, schemas) : FREE_OBJECT },
      },
    };
  }
  object['responses'] = {
    '2XX': {
      description: SUCCESS[operation.answer],
      content: { 'application/json': { schema: ref(operation.response, schemas) } },
    },
    default: { $ref: '#/components/responses/RobotError' },
  };
  return object;
}

const SUCCESS: Record<Operation['answer'], string> = {
  json: 'Success',
  document: 'Success; a JSON value that is not an object is read as its `data`',
  acknowledgement: 'Done; the body is informational (it may be empty or not JSON)',
};

/** The OpenAPI document of the robot-level interface, as a plain object. */
export function robotsOpenApi(): Record<string, unknown> {
  const schemas: Schemas = new Map();
  const paths: Record<string, Record<string, unknown>> = {};
  const tags: string[] = [];
  for (const operation of ROBOT_OPERATIONS) {
    const path = pathOf(operation);
    paths[path] = { ...paths[path], [operation.method.toLowerCase()]: operationObject(operation, schemas) };
    if (!tags.includes(operation.group)) tags.push(operation.group);
  }
  const error = ref(robotErrorSchema, schemas);
  return {
    openapi: '3.0.3',
    info: { title: 'Robot-level interface', version: 'v2', description: DESCRIPTION },
    servers: [
      {
        url: '{robot_base_url}',
        variables: {
          robot_base_url: {
            default: 'http://127.0.0.1:8080',
            description: 'Base address of the robot-level interface',
          },
        },
      },
    ],
    security: [{ bearerAuth: [] }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'Access token from the client-credentials grant (see auth.yaml)',
        },
      },
      parameters: { DeviceId: parameter(DEVICE_ID_PARAM) },
      responses: {
        RobotError: {
          description: 'Failure; the body, when there is one, says why',
          content: { 'application/json': { schema: error } },
        },
      },
      schemas: Object.fromEntries(schemas),
    },
  };
}

/** `openapi/robots-v2.yaml` as it should be committed. */
export function renderRobotsOpenApi(): string {
  return stringify(robotsOpenApi(), { lineWidth: 0 });
}
