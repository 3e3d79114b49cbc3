import fc from 'fast-check';
import { expect, it } from 'vitest';
import { errorForStatus, InvalidPayloadError, UpstreamError } from '../../src/upstream/errors.js';
import { type CannedUpstream, settle } from './canned-upstream.js';
import { mutated } from './mutate.js';

/**
 * The properties every parsed endpoint must have, whatever the body: a valid payload parses to
 * what it says; anything else either still parses to what it says, or fails with the typed
 * `InvalidPayloadError` (an observation error, never a state change) — never a TypeError or any
 * other exception; a body cut short never parses; an error status is always its typed error.
 */

export interface Endpoint<T = unknown> {
  name: string;
  call(upstream: CannedUpstream): Promise<T>;
  /** The status a success comes with. */
  status: number;
  /** Bodies as the spec describes them. */
  valid: fc.Arbitrary<unknown>;
  /**
   * How the returned value fails to say what the body said (`sent`: the body as decoded from the
   * wire, undefined when it was not JSON), judged by the documented shape, not by the client's schema.
   */
  problems(value: T, sent: unknown): string[];
  /** A robot write: the 2xx says it happened, and a body that is not JSON is kept as its message. */
  informationalBody?: boolean;
}

/** Bodies that are not JSON: binary, text, HTML error pages, a byte-order mark, nothing. */
const notJson = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('utf8')),
  fc.constantFrom(
    '',
    ' ',
    '<html><body>502 Bad Gateway</body></html>',
    'undefined',
    'NaN',
    '{',
    '\uFEFF{}',
    "{'a':1}",
  ),
);

/** Text of a JSON object or array with its end cut off, at any point (which never leaves valid JSON). */
const cutShort = (document: fc.Arbitrary<unknown>) =>
  document
    .filter((value) => typeof value === 'object' && value !== null)
    .chain((value) => {
      const text = JSON.stringify(value);
      return fc.integer({ min: 0, max: text.length - 1 }).map((length) => text.slice(0, length));
    });

function decoded(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

async function expectFaithfulOrInvalidPayload<T>(
  upstream: CannedUpstream,
  endpoint: Endpoint<T>,
  body: string,
) {
  upstream.answer(body, endpoint.status);
  const outcome = await settle(() => endpoint.call(upstream));
  if (outcome.ok) expect(endpoint.problems(outcome.value, decoded(body))).toEqual([]);
  else expect(outcome.error).toBeInstanceOf(InvalidPayloadError);
}

export function endpointProperties<T>(upstream: CannedUpstream, endpoint: Endpoint<T>, numRuns = 60): void {
  it('parses every valid payload to what it says', async () => {
    await fc.assert(
      fc.asyncProperty(endpoint.valid, async (body) => {
        const text = JSON.stringify(body);
        upstream.answer(text, endpoint.status);
        const outcome = await settle(() => endpoint.call(upstream));
        if (!outcome.ok) throw outcome.error;
        expect(endpoint.problems(outcome.value, decoded(text))).toEqual([]);
      }),
      { numRuns },
    );
  });

  it('answers any JSON, or a body that is not JSON, faithfully or with InvalidPayloadError only', async () => {
    const json = fc.jsonValue().map((value) => JSON.stringify(value));
    await fc.assert(
      fc.asyncProperty(fc.oneof(json, notJson), (body) =>
        expectFaithfulOrInvalidPayload(upstream, endpoint, body),
      ),
      { numRuns },
    );
  });

  it('answers a valid payload with fields dropped, replaced or mistyped the same way', async () => {
    await fc.assert(
      fc.asyncProperty(mutated(endpoint.valid), (body) =>
        expectFaithfulOrInvalidPayload(upstream, endpoint, JSON.stringify(body) ?? ''),
      ),
      { numRuns: numRuns * 5 },
    );
  });

  if (!endpoint.informationalBody) {
    it('never parses a body that was cut short', async () => {
      await fc.assert(
        fc.asyncProperty(cutShort(endpoint.valid), async (body) => {
          upstream.answer(body, endpoint.status);
          const outcome = await settle(() => endpoint.call(upstream));
          expect(outcome.ok ? outcome.value : outcome.error).toBeInstanceOf(InvalidPayloadError);
        }),
        { numRuns: Math.ceil(numRuns / 2) },
      );
    });
  }

  it('turns an error status into its typed error, whatever the body says', async () => {
    const status = fc.integer({ min: 300, max: 599 }).filter((code) => code !== endpoint.status);
    const body = fc.oneof(
      notJson,
      fc.jsonValue().map((value) => JSON.stringify(value)),
      mutated(endpoint.valid).map((value) => JSON.stringify(value) ?? ''),
    );
    const retryAfter = fc.option(fc.oneof(fc.string(), fc.nat().map(String)), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(status, body, retryAfter, async (code, text, after) => {
        upstream.answer(text, code, after === undefined ? {} : { 'retry-after': after });
        const outcome = await settle(() => endpoint.call(upstream));
        expect(outcome.ok).toBe(false);
        const error = (outcome as { error: unknown }).error;
        expect(error).toBeInstanceOf(UpstreamError);
        expect((error as UpstreamError).status).toBe(code);
        expect((error as UpstreamError).code).toBe(errorForStatus({ operation: 'x' }, code).code);
        expect((error as UpstreamError).message).not.toMatch(/\n/);
      }),
      { numRuns: Math.ceil(numRuns / 2) },
    );
  });
}
