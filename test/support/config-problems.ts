import { ConfigError } from '../../src/config/index.js';

/** The problems `config check` would print for what `parse` reads, one line each; it must refuse. */
export function configProblems(parse: () => unknown): string[] {
  try {
    parse();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}
