import { describe, expect, it } from 'vitest';
import { judgePowerStatus } from '../../src/operations/power-command.js';

const at = '2026-11-21T08:00:00Z';

describe('judgePowerStatus', () => {
  it('is done when the state matches and nothing is pending', () => {
    expect(judgePowerStatus({ state: 'on', pendingCommand: null, updatedAt: at }, 'on', true)).toBe('done');
    expect(judgePowerStatus({ state: 'on', pendingCommand: null, updatedAt: at }, 'on', false)).toBe('done');
  });

  it('waits while our command is pending, even when the state already matches', () => {
    expect(
      judgePowerStatus({ state: 'off', pendingCommand: { state: 'on' }, updatedAt: at }, 'on', true),
    ).toBe('waiting');
    expect(
      judgePowerStatus({ state: 'on', pendingCommand: { state: 'on' }, updatedAt: at }, 'on', true),
    ).toBe('waiting');
  });

  it('waits when the command is not visible yet right after acceptance', () => {
    expect(judgePowerStatus({ state: 'off', pendingCommand: null, updatedAt: null }, 'on', false)).toBe(
      'waiting',
    );
  });

  it('is superseded by a pending command for the other state', () => {
    expect(
      judgePowerStatus({ state: 'off', pendingCommand: { state: 'off' }, updatedAt: at }, 'on', true),
    ).toBe('superseded');
  });

  it('is dropped when our pending command cleared without reaching the state', () => {
    expect(judgePowerStatus({ state: 'unknown', pendingCommand: null, updatedAt: at }, 'on', true)).toBe(
      'dropped',
    );
  });
});
