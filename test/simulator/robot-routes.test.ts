import { describe, expect, it } from 'vitest';
import { ROBOT_HANDLERS } from '../../src/simulator/robot-handlers.js';
import { ROBOT_ROUTES } from '../../src/simulator/robot-routes.js';
import { ROBOT_OPERATIONS } from '../../src/upstream/operations/robot.js';

const gateway = ROBOT_OPERATIONS.filter((operation) => operation.api === 'gateway');

describe('the simulated robot gateway and the operation table', () => {
  it('has a handler for every gateway row, and none for anything else', () => {
    expect(Object.keys(ROBOT_HANDLERS).sort()).toEqual(gateway.map((operation) => operation.name).sort());
  });

  it('routes every gateway row by its method and path, and nothing else', () => {
    expect(ROBOT_ROUTES).toEqual(
      gateway.map((operation) => ({
        operation: operation.name,
        method: operation.method,
        path: operation.path,
      })),
    );
    const keys = ROBOT_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
