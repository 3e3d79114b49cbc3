import { readFile } from 'node:fs/promises';
import { OpenAPIBackend } from 'openapi-backend';
import { parse } from 'yaml';
import { ROBOT_OPERATIONS, type RobotOperation } from '../../src/upstream/operations/robot.js';

/** `openapi/robots-v2.yaml` as a validator of requests and responses. */
export async function loadRobotContract(): Promise<OpenAPIBackend> {
  const definition = parse(await readFile(new URL('../../openapi/robots-v2.yaml', import.meta.url), 'utf8'));
  const api = new OpenAPIBackend({
    definition: definition as ConstructorParameters<typeof OpenAPIBackend>[0]['definition'],
  });
  await api.init();
  return api;
}

/** A request body the contract accepts for `operation`, when it takes one as an argument. */
const SAMPLE_BODIES: Partial<Record<RobotOperation['name'], unknown>> = {
  sendMotionCommand: { motion_command: 1, mode: 0 },
};

/**
 * Arguments for the client method of `operation` that the contract accepts: the device id, each
 * parameter, and a body where the method takes one (a free object unless the row has a schema).
 */
export function sampleArgs(
  operation: RobotOperation,
  deviceId = 'dev/1 a',
  name = 'north yard/2',
): unknown[] {
  const args: unknown[] = operation.api === 'gateway' ? [deviceId] : [];
  for (const param of operation.params) {
    args.push(param.type === 'boolean' ? true : param.name === 'name' ? name : 'operator-b');
  }
  const takesBody = operation.body !== 'none' && !operation.params.some((param) => param.in === 'body');
  if (takesBody) args.push(SAMPLE_BODIES[operation.name] ?? { note: 'any object' });
  return args;
}

export { ROBOT_OPERATIONS };
