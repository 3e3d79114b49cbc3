import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAPIBackend } from 'openapi-backend';
import { configSchema } from '../../src/config/schema.js';
import { createUpstream, type Upstream } from '../../src/upstream/index.js';

/** A request as the contract server saw it. */
export interface Received {
  operation: string;
  valid: boolean;
  errors: unknown;
  authorization?: string;
  contentType?: string;
  bodyLength: number;
}

export interface ContractServer {
  /** The real client, pointed at the server for the token issuer, `/v1` and the robot gateway. */
  upstream: Upstream;
  received: Received[];
  close(): Promise<void>;
}

/** An answer: a status and, unless undefined, a JSON body. */
export type Answer = (operationId: string) => { status: number; body?: unknown };

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function decoded(body: string): unknown {
  if (body === '') return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * A loopback server that knows nothing but an OpenAPI document: it issues `token` at
 * `/oauth/token`, validates every other request against the document, records it, and answers it
 * with `answer(operationId)`.
 */
export async function startContractServer(
  api: OpenAPIBackend,
  token: string,
  answer: Answer,
): Promise<ContractServer> {
  const received: Received[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/oauth/token') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
      return;
    }
    const openapiRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      headers: request.headers as Record<string, string>,
      query: Object.fromEntries(url.searchParams),
      body: decoded(body),
    };
    const operation = api.matchOperation(openapiRequest);
    if (!operation) {
      response.writeHead(404).end();
      return;
    }
    const validation = api.validateRequest(openapiRequest, operation);
    received.push({
      operation: operation.operationId ?? '?',
      valid: validation.valid,
      errors: validation.errors,
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      bodyLength: body.length,
    });
    const { status, body: mock } = answer(operation.operationId ?? '');
    response.writeHead(status, mock === undefined ? {} : { 'content-type': 'application/json' });
    response.end(mock === undefined ? undefined : JSON.stringify(mock));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = configSchema.parse({
    upstream: {
      base_url: url,
      robot_base_url: url,
      auth_url: url,
      client_id: 'contract',
      client_secret: 'contract-secret',
      http: { retries: 0 },
    },
  });
  const upstream = createUpstream({ config: config.upstream });
  return {
    upstream,
    received,
    close: async () => {
      await upstream.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
