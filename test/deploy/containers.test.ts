import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { IMAGE_ENV } from '../../bench/fleetwatch.js';
import { loadConfig } from '../../src/config/index.js';
import { SecretRegistry } from '../../src/log/secrets.js';
import {
  bindMounts,
  compose,
  composeDefaults,
  composeText,
  dockerfile,
  execForm,
  hasHealthcheck,
  healthcheckCommand,
  healthcheckInstruction,
  hostFileOf,
  inRuntime,
  ROOT,
  read,
  runtime,
  services,
} from './container-files.js';

/**
 * The container set-up, checked without a Docker engine: the compose file and the Dockerfile are
 * read and held to the rules the README states (Operations, Containers). The image's commands
 * run in test/system/deploy/image-commands.test.ts.
 */

describe('docker-compose.yml', () => {
  it('has the stack: Redis, the simulator, two fleetwatch replicas, Prometheus, Grafana', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['fleetwatch-1', 'fleetwatch-2', 'grafana', 'prometheus', 'redis', 'simulator'].sort(),
    );
  });

  it('runs Redis with a health check and noeviction (BullMQ loses jobs to eviction)', () => {
    const redis = services.redis!;
    expect(redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    const command = redis.command ?? [];
    expect(command[command.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
  });

  it('gives every service a health check, and waits on each dependency until it is healthy', () => {
    for (const [name, service] of Object.entries(services)) {
      expect(hasHealthcheck(service), `${name} has a health check`).toBe(true);
      const dependsOn = service.depends_on ?? {};
      expect(Array.isArray(dependsOn), `${name}: depends_on must name a condition`).toBe(false);
      for (const [dependency, { condition }] of Object.entries(dependsOn)) {
        expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        expect(condition, `${name} → ${dependency}`).toBe(
          hasHealthcheck(services[dependency]!) ? 'service_healthy' : 'service_started',
        );
      }
    }
    expect(Object.keys(services['fleetwatch-1']!.depends_on ?? {}).sort()).toEqual(['redis', 'simulator']);
    expect(Object.keys(services.prometheus!.depends_on ?? {}).sort()).toEqual([
      'fleetwatch-1',
      'fleetwatch-2',
    ]);
    expect(Object.keys(services.grafana!.depends_on ?? {})).toEqual(['prometheus']);
  });

  it('mounts only files and folders that exist', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const mount of bindMounts(service)) {
        expect(existsSync(join(ROOT, mount.host)), `${name}: ${mount.host}`).toBe(true);
      }
    }
  });

  it('runs both replicas of this image on the compose config, which listens on 0.0.0.0:9464', () => {
    for (const name of ['fleetwatch-1', 'fleetwatch-2']) {
      const service = services[name]!;
      expect(service.build).toBe('.');
      expect(service.command).toEqual(['run']);
      const configPath = service.environment?.FLEETWATCH_CONFIG ?? '';
      expect(hostFileOf(service, configPath), name).toBe('./deploy/fleetwatch.compose.yaml');
    }
    const config = loadConfig(join(ROOT, 'deploy/fleetwatch.compose.yaml'), {}, new SecretRegistry());
    expect(config.http).toMatchObject({ host: '0.0.0.0', port: 9464 });
    expect(config.redis.url).toBe('redis://redis:6379');
    expect(config.upstream.base_url).toBe('http://simulator:8080');
  });

  it('has Prometheus scrape both replicas every 5 s from the mounted deploy/prometheus/', () => {
    const prometheus = services.prometheus!;
    const configFlag = (prometheus.command ?? []).find((arg) => arg.startsWith('--config.file='));
    const file = hostFileOf(prometheus, configFlag?.slice('--config.file='.length) ?? '');
    expect(file).toBe('deploy/prometheus/prometheus.yml');
    const config = parse(read(file!)) as {
      global: { scrape_interval: string };
      scrape_configs: {
        job_name: string;
        scrape_interval?: string;
        static_configs: { targets: string[] }[];
      }[];
    };
    const job = config.scrape_configs.find((entry) => entry.job_name === 'fleetwatch');
    expect(job?.scrape_interval ?? config.global.scrape_interval).toBe('5s');
    expect(job?.static_configs.flatMap((entry) => entry.targets).sort()).toEqual([
      'fleetwatch-1:9464',
      'fleetwatch-2:9464',
    ]);
  });

  it("lets the host's calls reach the simulator's control API through the stack's own network range", () => {
    const subnet = compose.networks?.default?.ipam?.config?.[0]?.subnet;
    expect(subnet).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    const command = services.simulator!.command ?? [];
    expect(command[command.indexOf('--control-from') + 1]).toBe(`loopback,${subnet}`);
    // One variable moves both, so an override cannot leave the simulator naming the wrong range.
    const uses = composeText.match(/\$\{FLEETWATCH_COMPOSE_SUBNET:-[^}]*\}/g) ?? [];
    expect(uses).toHaveLength(2);
    expect(new Set(uses).size).toBe(1);
    expect(services.simulator!.ports).toContain('127.0.0.1:8080:8080');
  });

  it('passes FLEETWATCH_API_TOKEN into both replicas, which the compose config reads', () => {
    expect(composeText).toContain('FLEETWATCH_API_TOKEN: ${FLEETWATCH_API_TOKEN:-}');
    for (const name of ['fleetwatch-1', 'fleetwatch-2']) {
      expect(services[name]!.environment, name).toHaveProperty('FLEETWATCH_API_TOKEN', '');
    }
    const token = 'a-token-of-sixteen-or-more';
    const config = loadConfig(
      join(ROOT, 'deploy/fleetwatch.compose.yaml'),
      { FLEETWATCH_API_TOKEN: token },
      new SecretRegistry(),
    );
    expect(config.http.api_token).toBe(token);
  });

  it('resolves compose variables as compose does when none is set', () => {
    expect(composeDefaults('a ${X:-1.2.3.0/24} b ${Y-z} c ${Z} $$HOME')).toBe('a 1.2.3.0/24 b z c  $HOME');
  });

  it('provisions Grafana (datasource, dashboards) with anonymous viewers on port 3000', () => {
    const grafana = services.grafana!;
    expect(hostFileOf(grafana, '/etc/grafana/provisioning/datasources/prometheus.yaml')).toBe(
      'deploy/grafana/provisioning/datasources/prometheus.yaml',
    );
    expect(hostFileOf(grafana, '/etc/grafana/provisioning/dashboards/fleetwatch.yaml')).toBe(
      'deploy/grafana/provisioning/dashboards/fleetwatch.yaml',
    );
    const home = grafana.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH ?? '';
    expect(existsSync(join(ROOT, hostFileOf(grafana, home) ?? 'missing'))).toBe(true);
    expect(grafana.environment).toMatchObject({
      GF_AUTH_ANONYMOUS_ENABLED: 'true',
      GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer',
    });
    expect(grafana.ports?.some((port) => port.endsWith(':3000'))).toBe(true);
  });
});

describe('scripts/container-check.sh', () => {
  it('is executable, and CI runs it only after its preflight, skipping on no engine (3) or no image (4)', () => {
    expect(statSync(join(ROOT, 'scripts/container-check.sh')).mode & 0o111).not.toBe(0);
    const ci = read('.ci/run');
    const preflight = ci.indexOf('scripts/container-check.sh --preflight');
    expect(preflight).toBeGreaterThan(0);
    expect(ci.indexOf('scripts/container-check.sh\n')).toBeGreaterThan(preflight);
    expect(ci).toMatch(
      /"\$preflight" -eq 3 \] \|\| \[ "\$preflight" -eq 4 \][^\n]*\n\s*echo "container check skipped/,
    );
  });

  it('sets the variables the compose file reads: the network range and the API token', () => {
    const script = read('scripts/container-check.sh');
    for (const name of ['FLEETWATCH_COMPOSE_SUBNET', 'FLEETWATCH_API_TOKEN']) {
      expect(composeText, name).toContain(`\${${name}:-`);
      expect(script, name).toMatch(new RegExp(`export ${name}\\b`));
    }
  });
});

describe('Dockerfile', () => {
  it('builds in one stage and runs in another, from the same Node image', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile.stages.map((stage) => stage.name)).toEqual(['build', 'runtime']);
    expect(dockerfile.stages.map((stage) => stage.from)).toEqual(['${NODE_IMAGE}', '${NODE_IMAGE}']);
    expect(dockerfile.globals.find((i) => i.keyword === 'ARG')?.args).toMatch(/^NODE_IMAGE=node:\d+-/);
    const build = dockerfile.stages[0]!.instructions;
    expect(build.some((i) => i.keyword === 'RUN' && /npm ci\b(?!.*--omit=dev)/.test(i.args))).toBe(true);
    expect(build.some((i) => i.keyword === 'RUN' && /npm run build/.test(i.args))).toBe(true);
  });

  it('installs production dependencies only in the runtime stage', () => {
    const installs = inRuntime('RUN').filter((i) => /npm (?:ci|install|i)\b/.test(i.args));
    expect(installs).toHaveLength(1);
    expect(installs[0]!.args).toMatch(/npm ci --omit=dev/);
    expect(inRuntime('COPY').find((i) => i.args.startsWith('--from=build'))?.args).toMatch(/\/app\/dist/);
  });

  it('sets the environment the benchmark measures fleetwatch with (malloc thresholds)', () => {
    const env = Object.fromEntries(
      inRuntime('ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
    );
    for (const [name, value] of Object.entries(IMAGE_ENV)) expect(env[name], name).toBe(value);
  });

  it('runs as the node user under tini, node directly (not npm start)', () => {
    const order = runtime.instructions.map((i) => i.keyword);
    expect(inRuntime('USER').map((i) => i.args)).toEqual(['node']);
    expect(order.indexOf('USER')).toBeGreaterThan(order.lastIndexOf('RUN'));
    expect(inRuntime('RUN').some((i) => /apt-get install .*\btini\b/.test(i.args))).toBe(true);
    const entrypoint = execForm(inRuntime('ENTRYPOINT').at(-1)?.args ?? '');
    expect(entrypoint).toEqual(['/usr/bin/tini', '--', 'node', 'bin/fleetwatch.js']);
    const cmd = execForm(inRuntime('CMD').at(-1)?.args ?? '');
    expect(cmd).toEqual(['run']);
    expect(JSON.stringify([entrypoint, cmd])).not.toMatch(/npm/);
  });

  it('checks its health with node fetch on the exposed port, no curl', () => {
    expect(inRuntime('EXPOSE').map((i) => i.args)).toEqual(['9464']);
    expect(healthcheckCommand?.slice(0, 2)).toEqual(['node', '-e']);
    expect(healthcheckCommand?.[2]).toContain("fetch('http://127.0.0.1:9464/healthz')");
    expect(healthcheckInstruction?.args).not.toMatch(/curl|wget/);
  });

  it('copies only sources that exist and that .dockerignore lets through', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const copies = dockerfile.stages
      .flatMap((stage) => stage.instructions)
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from='));
    expect(copies.length).toBeGreaterThan(3);
    for (const copy of copies) {
      const parts = copy.args.split(/\s+/).filter((part) => !part.startsWith('--'));
      for (const source of parts.slice(0, -1)) {
        expect(existsSync(join(ROOT, source)), `COPY ${source} (line ${copy.line})`).toBe(true);
        const top = source.replace(/^\.\//, '').split('/')[0]!;
        expect(ignored, `COPY ${source} is excluded by .dockerignore`).not.toContain(top);
      }
    }
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
  });
});
