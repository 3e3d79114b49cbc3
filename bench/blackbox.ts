import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool, request } from 'undici';
import { freePort } from '../test/support/private-redis.js';
import { BenchProcess } from './child.js';
import { robotSignalPath } from './cycle.js';
import { cpuMicros } from './proc.js';

/**
 * The peer: Prometheus' blackbox_exporter (Debian's `prometheus-blackbox-exporter`) probing the
 * same robot health endpoints with the same bearer token. Its CPU per probe is what a
 * general-purpose prober spends on one HTTP check and its result.
 */

const BINARIES = ['prometheus-blackbox-exporter', 'blackbox_exporter'];

export function findBlackbox(): { binary: string; version: string } | undefined {
  for (const binary of BINARIES) {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    if (probe.status === 0) {
      const output = `${probe.stdout}${probe.stderr}`;
      const version = /version (\S+)/.exec(output)?.[1] ?? 'unknown';
      return { binary, version };
    }
  }
  return undefined;
}

export interface BlackboxResult {
  version: string;
  probes: number;
  failed: number;
  cpuMicros: number;
  wallMs: number;
}

export async function runBlackbox(options: {
  binary: string;
  version: string;
  simulatorUrl: string;
  token: string;
  robots: readonly string[];
  concurrency: number;
  workDir: string;
}): Promise<BlackboxResult> {
  const config = join(options.workDir, 'blackbox.yml');
  writeFileSync(
    config,
    [
      'modules:',
      '  robot_health:',
      '    prober: http',
      '    timeout: 10s',
      '    http:',
      '      method: GET',
      '      valid_status_codes: [200]',
      '      preferred_ip_protocol: ip4',
      '      ip_protocol_fallback: false',
      '      headers:',
      `        Authorization: "Bearer ${options.token}"`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const exporter = new BenchProcess(
    'blackbox_exporter',
    options.binary,
    [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { logFile: join(options.workDir, 'blackbox.log') },
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let attempt = 0; ; attempt++) {
      const ready = await request(`${base}/metrics`)
        .then(async (res) => {
          await res.body.dump();
          return res.statusCode === 200;
        })
        .catch(() => false);
      if (ready) break;
      if (attempt > 100 || !exporter.running)
        throw new Error(`blackbox_exporter did not start (see ${exporter.logFile})`);
      await delay(100);
    }
    const pool = new Pool(base, { connections: options.concurrency });
    const targets = options.robots.map((id) => `${options.simulatorUrl}${robotSignalPath(id, 'health')}`);
    let next = 0;
    let failed = 0;
    const worker = async (): Promise<void> => {
      while (next < targets.length) {
        const target = targets[next++]!;
        const res = await pool.request({
          method: 'GET',
          path: `/probe?module=robot_health&target=${encodeURIComponent(target)}`,
        });
        const text = await res.body.text();
        if (!/^probe_success 1$/m.test(text)) failed += 1;
      }
    };
    const before = cpuMicros(exporter.pid);
    const started = performance.now();
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const wallMs = performance.now() - started;
    const cpu = cpuMicros(exporter.pid) - before;
    await pool.close();
    return { version: options.version, probes: targets.length, failed, cpuMicros: cpu, wallMs };
  } finally {
    await exporter.stop();
  }
}
