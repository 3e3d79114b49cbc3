import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * The container set-up as data: the Dockerfile's instructions by stage and the compose file's
 * services, read once. test/deploy/containers.test.ts holds them to the rules (see the README,
 * Operations, Containers); test/system/deploy/image-commands.test.ts runs the commands they name.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

// --- Dockerfile -------------------------------------------------------------------------------

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}
export interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Instructions (continuations joined, comments dropped), grouped by stage. */
export function parseDockerfile(text: string): { globals: Instruction[]; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let buffer = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (buffer === '' && (line.trim() === '' || line.trim().startsWith('#'))) return;
    if (buffer !== '' && line.trim().startsWith('#')) return;
    if (buffer === '') start = index + 1;
    if (line.endsWith('\\')) {
      buffer += `${line.slice(0, -1)} `;
      return;
    }
    buffer += line;
    const match = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(buffer);
    if (match) instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: start });
    buffer = '';
  });
  const globals: Instruction[] = [];
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [from, as, name] = instruction.args.split(/\s+/);
      stages.push({
        from: from ?? '',
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        instructions: [],
      });
    } else if (stages.length === 0) globals.push(instruction);
    else stages.at(-1)!.instructions.push(instruction);
  }
  return { globals, stages };
}

/** The JSON (exec) form of CMD, ENTRYPOINT or HEALTHCHECK CMD; undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(args);
    return Array.isArray(value) && value.every((part) => typeof part === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

export const dockerfile = parseDockerfile(read('Dockerfile'));
export const runtime = dockerfile.stages.at(-1)!;
export const inRuntime = (keyword: string) => runtime.instructions.filter((i) => i.keyword === keyword);
export const healthcheckInstruction = inRuntime('HEALTHCHECK').at(-1);
/** `HEALTHCHECK [--options] CMD [...]` → the command, exec form. */
export const healthcheckCommand = execForm(
  healthcheckInstruction?.args.replace(/^(?:--\S+\s+)*CMD\s+/, '') ?? '',
);

// --- compose ----------------------------------------------------------------------------------

export interface Healthcheck {
  test?: string[] | string;
  disable?: boolean;
}
export interface Service {
  image?: string;
  build?: string | { context: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: Healthcheck;
  depends_on?: Record<string, { condition: string }> | string[];
}
/**
 * Compose's variable substitution with nothing set in the environment: `${NAME:-default}` and
 * `${NAME-default}` become the default, `${NAME}` nothing, `$$` a `$` (what `docker compose config`
 * prints on a machine with no such variables). Like compose, it works on the parsed values.
 */
export function composeDefaults(text: string): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (whole, _name, fallback) =>
    whole === '$$' ? '$' : ((fallback as string | undefined) ?? ''),
  );
}

function resolveDefaults(value: unknown): unknown {
  if (typeof value === 'string') return composeDefaults(value);
  if (Array.isArray(value)) return value.map(resolveDefaults);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveDefaults(item)]));
  }
  return value;
}

/** docker-compose.yml as written, variables unresolved. */
export const composeText = read('docker-compose.yml');
export const compose = resolveDefaults(parse(composeText, { merge: true })) as {
  services: Record<string, Service>;
  networks?: Record<string, { ipam?: { config?: { subnet?: string }[] } }>;
};
export const services = compose.services;

/** Whether a service has a health check: its own, or the image's HEALTHCHECK when built from this Dockerfile. */
export function hasHealthcheck(service: Service): boolean {
  if (service.healthcheck) return service.healthcheck.disable !== true;
  return service.build !== undefined && healthcheckInstruction !== undefined;
}

/** `./host:/container[:ro]` bind mounts. */
export function bindMounts(service: Service): { host: string; container: string }[] {
  return (service.volumes ?? [])
    .filter((volume) => volume.startsWith('./') || volume.startsWith('../'))
    .map((volume) => {
      const [host, container] = volume.split(':');
      return { host: host!, container: container! };
    });
}

/** The repo file a path inside a service's container comes from, through its bind mounts. */
export function hostFileOf(service: Service, containerPath: string): string | undefined {
  for (const mount of bindMounts(service)) {
    if (containerPath === mount.container) return mount.host;
    if (containerPath.startsWith(`${mount.container}/`)) {
      return posix.join(mount.host, containerPath.slice(mount.container.length + 1));
    }
  }
  return undefined;
}
