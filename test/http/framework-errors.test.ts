import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATH_SEGMENT } from '../../src/http/errors.js';
import { HttpServer } from '../../src/http/server.js';
import { createHarness, type Harness } from '../pollers/harness.js';
import { serverOptions, TOKEN } from './helpers.js';

/**
 * What the HTTP stack refuses before a route runs (the router, the body parser, node's HTTP parser)
 * is answered in the API's own shape. Raw bytes on a socket to the real server on a loopback port:
 * a client library would refuse to send most of these.
 */

let h: Harness;
let server: HttpServer;
let port: number;

beforeAll(async () => {
  h = await createHarness();
  server = new HttpServer(serverOptions(h, { token: TOKEN }));
  port = Number(new URL(await server.start()).port);
});

afterAll(async () => {
  await server?.close();
  await h?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (and `body`) as they are; resolves with the answer once the server closes. */
function exchange(head: string, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(head + body));
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close before reading all we sent; what it answered is still there.
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no answer: ${JSON.stringify(text)}`));
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) });
    });
  });
}

const request = (line: string, headers: Record<string, string | number> = {}): string =>
  `${line} HTTP/1.1\r\n${Object.entries({
    host: '127.0.0.1',
    connection: 'close',
    authorization: `Bearer ${TOKEN}`,
    ...headers,
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** The documented error shape, and nothing else, with the headers every answer carries. */
function expectApiError(answer: Answer, status: number, code: string): string {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  const parsed = JSON.parse(answer.body) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(Object.keys(parsed.error).sort()).toEqual(['code', 'message']);
  expect(parsed.error.code).toBe(code);
  return parsed.error.message;
}

describe('errors of the HTTP stack', () => {
  it('a path segment longer than the router takes: 414, naming the limit', async () => {
    const answer = await exchange(request(`GET /api/vehicles/${'v'.repeat(MAX_PATH_SEGMENT + 1)}`));
    expect(expectApiError(answer, 414, 'uri_too_long')).toBe(
      `path: a segment is longer than ${MAX_PATH_SEGMENT} characters`,
    );
    expect(MAX_PATH_SEGMENT).toBeGreaterThanOrEqual(1_000);
  });

  it('a segment as long as a dead-letter id reaches its route', async () => {
    const id = `ops-bridge~0~${'severity=warning,subject=vehicle_veh-0001,'.repeat(2).slice(0, 80)}~0123456789abcdef~mifz1k2a~0`;
    expect(id.length).toBeGreaterThan(100);
    const answer = await exchange(request(`POST /api/dead-letters/${encodeURIComponent(id)}/replay`));
    expect(expectApiError(answer, 404, 'not_found')).toBe(`no dead letter ${id}`);
  });

  it('a path that is not valid percent-encoding: 400', async () => {
    const answer = await exchange(request('GET /api/vehicles/%E0%A4%A'));
    expect(expectApiError(answer, 400, 'bad_request')).toMatch(/^path: is not valid percent-encoding/);
  });

  it('an unknown path: 404; a known path with another method: 405 with Allow', async () => {
    expect(expectApiError(await exchange(request('GET /api/nothing')), 404, 'not_found')).toBe(
      'no such endpoint: GET /api/nothing',
    );
    const wrongMethod = await exchange(request('DELETE /api/vehicles'));
    expect(expectApiError(wrongMethod, 405, 'method_not_allowed')).toBe(
      'DELETE is not allowed on /api/vehicles; it takes GET, HEAD',
    );
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
    const withParams = await exchange(request('GET /api/dead-letters/some-id/replay'));
    expectApiError(withParams, 405, 'method_not_allowed');
    expect(withParams.headers.allow).toBe('POST');
  });

  it('headers, or a URL, larger than node takes: 431', async () => {
    const bigHeader = await exchange(request('GET /healthz', { 'x-filler': 'f'.repeat(20_000) }));
    expect(expectApiError(bigHeader, 431, 'headers_too_large')).toMatch(/larger than \d+ bytes/);
    const bigUrl = await exchange(request(`GET /api/events?subject=${'s'.repeat(20_000)}`));
    expectApiError(bigUrl, 431, 'headers_too_large');
  });

  it('bytes that are not HTTP: 400', async () => {
    const answer = await exchange('HELLO THERE\r\n\r\n');
    expect(expectApiError(answer, 400, 'bad_request')).toMatch(/^the request is not valid HTTP\/1\.1/);
  });

  it('bodies: too large 413, not JSON 400, another media type 415', async () => {
    // Refused from its content-length, before the body is read.
    const large = await exchange(
      request('POST /api/silences', { 'content-type': 'application/json', 'content-length': 70_000 }),
    );
    expect(expectApiError(large, 413, 'payload_too_large')).toBe(
      'body: is larger than 64 KiB, the most this API accepts',
    );
    const notJson = await exchange(
      request('POST /api/silences', { 'content-type': 'application/json', 'content-length': 5 }),
      '{nope',
    );
    expect(expectApiError(notJson, 400, 'bad_request')).toBe('body: is not valid JSON');
    const text = await exchange(
      request('POST /api/silences', { 'content-type': 'text/plain', 'content-length': 5 }),
      'hello',
    );
    expect(expectApiError(text, 415, 'unsupported_media_type')).toBe('body: send it as application/json');
  });
});
