import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { redisAnswers } from '../../src/demo/redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where tests reach Redis; empty when none could be found (tests that need it then fail with a message). */
    redisUrl: string;
    redisProblem: string;
  }
}

const LOCAL = 'redis://127.0.0.1:6379';

/**
 * Tests get Redis from REDIS_URL, else the local server, else a throwaway container when a Docker
 * engine answers — so a laptop with Docker needs no Redis install.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    project.provide(
      'redisProblem',
      (await redisAnswers(fromEnv)) ? '' : `REDIS_URL=${fromEnv} does not answer`,
    );
    return undefined;
  }
  if (await redisAnswers(LOCAL)) {
    project.provide('redisUrl', LOCAL);
    project.provide('redisProblem', '');
    return undefined;
  }
  try {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('redis:7-alpine')
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
      .start();
    project.provide('redisUrl', `redis://${container.getHost()}:${container.getMappedPort(6379)}`);
    project.provide('redisProblem', '');
    return async () => {
      await container.stop();
    };
  } catch (error) {
    project.provide('redisUrl', '');
    project.provide(
      'redisProblem',
      `no Redis: set REDIS_URL, run redis-server on 127.0.0.1:6379, or start Docker (${(error as Error).message.split('\n')[0]})`,
    );
    return undefined;
  }
}
