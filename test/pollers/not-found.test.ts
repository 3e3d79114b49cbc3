import { describe, expect, it } from 'vitest';
import type { Observation } from '../../src/events/types.js';
import { unconfirmedNotFound } from '../../src/pollers/entity-poller.js';

const notFound: Observation<unknown> = {
  ok: false,
  at: '2026-11-21T09:00:30.000Z',
  error: { code: 'not_found', status: 404, message: 'vehicle "v" not found' },
};
const listedAt = Date.parse('2026-11-21T09:00:20.000Z');

describe('unconfirmedNotFound', () => {
  it('holds back a first 404: the entity may just have left the list', () => {
    expect(unconfirmedNotFound(notFound, { version: 3, state: {} }, listedAt)).toBe(true);
  });

  it('lets a 404 count once a list after the previous 404 still held the entity', () => {
    const record = {
      version: 3,
      state: {},
      lastError: { code: 'not_found', status: 404, message: '' },
      lastPolledAt: '2026-11-21T09:00:00.000Z',
    };
    expect(unconfirmedNotFound(notFound, record, listedAt)).toBe(false);
  });

  it('keeps holding back when no list came between the two 404s', () => {
    const record = {
      version: 3,
      state: {},
      lastError: { code: 'not_found', status: 404, message: '' },
      lastPolledAt: '2026-11-21T09:00:25.000Z',
    };
    expect(unconfirmedNotFound(notFound, record, listedAt)).toBe(true);
  });

  it('holds back when the latest list no longer holds the entity', () => {
    const record = {
      version: 3,
      state: {},
      lastError: { code: 'not_found', status: 404, message: '' },
      lastPolledAt: '2026-11-21T09:00:00.000Z',
    };
    expect(unconfirmedNotFound(notFound, record, Number.NaN)).toBe(true);
  });

  it('never holds back other readings', () => {
    const timeout: Observation<unknown> = {
      ok: false,
      at: notFound.at,
      error: { code: 'timeout', message: '' },
    };
    expect(unconfirmedNotFound(timeout, { version: 1, state: {} }, listedAt)).toBe(false);
    expect(
      unconfirmedNotFound({ ok: true, at: notFound.at, value: {} }, { version: 1, state: {} }, listedAt),
    ).toBe(false);
  });
});
