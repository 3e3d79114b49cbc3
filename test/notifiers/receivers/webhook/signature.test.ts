import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { sign } from '../../../../src/notifiers/receivers/webhook/signature.js';
import { newSecret } from './helpers.js';

// The fixed check from the Standard Webhooks specification.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('sign', () => {
  it('reproduces the Standard Webhooks test vector exactly', () => {
    expect(sign(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    expect(sign([VECTOR.secret], VECTOR.id, VECTOR.timestamp, Buffer.from(VECTOR.body))).toBe(
      VECTOR.signature,
    );
  });

  it('agrees with the official package on the vector', () => {
    const official = new Webhook(VECTOR.secret);
    expect(official.sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body)).toBe(VECTOR.signature);
  });

  it('agrees with standardwebhooks Webhook#sign and passes its verify, for any id and body', () => {
    const now = Math.floor(Date.now() / 1000);
    fc.assert(
      fc.property(
        fc.integer({ min: 24, max: 64 }),
        fc.string({ minLength: 1, maxLength: 40 }).filter((id) => !/[\s,]/.test(id)),
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.integer({ min: -200, max: 200 }),
        (bytes, id, text, skew) => {
          const secret = newSecret(bytes);
          const body = JSON.stringify({ text });
          const timestamp = now + skew;
          const ours = sign(secret, id, timestamp, body);
          const official = new Webhook(secret);
          expect(ours).toBe(official.sign(id, new Date(timestamp * 1000), body));
          expect(
            official.verify(body, {
              'webhook-id': id,
              'webhook-timestamp': String(timestamp),
              'webhook-signature': ours,
            }),
          ).toEqual({ text });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('signs the exact UTF-8 bytes of the body', () => {
    const secret = newSecret();
    const body = '{"where":"Zürich ✓ 🚗"}';
    expect(sign(secret, 'msg_1', 1_700_000_000, body)).toBe(
      sign(secret, 'msg_1', 1_700_000_000, Buffer.from(body, 'utf8')),
    );
    expect(sign(secret, 'msg_1', 1_700_000_000, body)).not.toBe(
      sign(secret, 'msg_1', 1_700_000_000, body.normalize('NFD')),
    );
  });

  it('lists one signature per secret, space-separated, in the order of the secrets (rotation)', () => {
    const [oldSecret, newSecretValue] = [newSecret(), newSecret()];
    const header = sign([newSecretValue, oldSecret], 'msg_2', 1_700_000_000, '{}');
    expect(header.split(' ')).toEqual([
      sign(newSecretValue, 'msg_2', 1_700_000_000, '{}'),
      sign(oldSecret, 'msg_2', 1_700_000_000, '{}'),
    ]);
    const now = Math.floor(Date.now() / 1000);
    const signed = sign([newSecretValue, oldSecret], 'msg_3', now, '{"a":1}');
    for (const known of [oldSecret, newSecretValue]) {
      expect(
        new Webhook(known).verify('{"a":1}', {
          'webhook-id': 'msg_3',
          'webhook-timestamp': String(now),
          'webhook-signature': signed,
        }),
      ).toEqual({ a: 1 });
    }
  });

  it('refuses secrets and timestamps it cannot use, without repeating the secret', () => {
    const bad = 'whsec_dG9vLXNob3J0';
    expect(() => sign(bad, 'msg', 1, '{}')).toThrow('not a usable whsec_ signing secret');
    try {
      sign(bad, 'msg', 1, '{}');
    } catch (error) {
      expect((error as Error).message).not.toContain('dG9vLXNob3J0');
    }
    expect(() => sign([], 'msg', 1, '{}')).toThrow('at least one signing secret');
    expect(() => sign(VECTOR.secret, 'msg', 1.5, '{}')).toThrow('unix seconds');
  });
});
