/** A reference to an unset environment variable, found while interpolating. */
export interface MissingVariable {
  path: string;
  variable: string;
}

const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${NAME}` and `${NAME:-fallback}` in every string of a parsed YAML tree; `$${` stands for a
 * literal `${`. Interpolating after parsing keeps a secret with YAML syntax in it (`#`, `: `) intact.
 */
export function interpolate(
  value: unknown,
  env: Record<string, string | undefined>,
  missing: MissingVariable[],
  path = '',
): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (whole, name: string | undefined, fallback: string | undefined) => {
      if (name === undefined) return '${';
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      missing.push({ path, variable: name });
      return whole;
    });
  }
  if (Array.isArray(value)) {
    return value.map((item, index) => interpolate(item, env, missing, `${path}[${index}]`));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        interpolate(item, env, missing, path ? `${path}.${key}` : key),
      ]),
    );
  }
  return value;
}
