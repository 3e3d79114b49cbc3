const MIN_SECRET_LENGTH = 6;
const MAX_REMEMBERED = 64;
export const REDACTED = '[REDACTED]';

/**
 * Every secret value fleetwatch holds (client secret, bearer tokens, webhook URLs, signing keys).
 * Log lines and error messages pass through `scrub`, so a secret that slips into any text is
 * replaced wherever it appears, not only under the field names a redaction list knows about.
 */
export class SecretRegistry {
  readonly #values = new Set<string>();
  #pattern: RegExp | undefined;

  add(value: string | undefined | null): void {
    if (!value || value.length < MIN_SECRET_LENGTH || this.#values.has(value)) return;
    this.#values.add(value);
    if (this.#values.size > MAX_REMEMBERED) {
      const oldest = this.#values.values().next().value;
      if (oldest !== undefined) this.#values.delete(oldest);
    }
    this.#pattern = undefined;
  }

  scrub(text: string): string {
    if (this.#values.size === 0) return text;
    this.#pattern ??= new RegExp(
      [...this.#values]
        .sort((a, b) => b.length - a.length)
        .map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('|'),
      'g',
    );
    return text.replace(this.#pattern, REDACTED);
  }
}

/** The process-wide registry: the logger and the CLI's error printer both read it. */
export const secrets = new SecretRegistry();
