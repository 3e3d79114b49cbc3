/**
 * A configuration change one part of a running process has built and checked but not yet put in
 * force. A reload prepares every part first and commits them only when all were prepared, so a
 * change that cannot be built (in any part) changes nothing; `discard` drops what was built then.
 * `commit` swaps what the part reads and starts or stops what it runs; it does not fail for the
 * new settings, which were checked when prepared.
 */
export interface PreparedReload {
  commit(): void | Promise<void>;
  discard?(): void | Promise<void>;
}

/** A part with nothing to change. */
export const NOTHING_TO_RELOAD: PreparedReload = { commit: () => {} };
