import { DEFAULT_PREFIX, encodeSegment, hashTag } from '../../store/keys.js';

/**
 * Redis keys of the notification step, under the same `{<prefix>}` hash tag as every other key
 * (one Cluster slot, so one Lua call may touch a group, the wake set and subject sets together):
 *
 * ```
 * {p}:notify:group:<groupKey>     hash    one aggregation group: `v` (version token), `s` (record JSON)
 * {p}:notify:wake                 zset    group keys, score = epoch ms the flusher should look next
 * {p}:notify:subject:<subject>    set     group keys holding an open incident of that subject
 * {p}:silences                    hash    silence id → Silence JSON
 * ```
 *
 * Group keys are `[A-Za-z0-9._=,~-]` only (routing/labels.ts) and go into keys as they are (any
 * other key is percent-encoded); subjects are percent-encoded like every other key segment.
 */
const SAFE_GROUP_KEY = /^[A-Za-z0-9._=,~-]+$/;

export interface NotifyKeys {
  readonly tag: string;
  readonly wake: string;
  readonly silences: string;
  group(groupKey: string): string;
  subject(subject: string): string;
}

export function notifyKeys(prefix: string = DEFAULT_PREFIX): NotifyKeys {
  const tag = hashTag(prefix);
  return {
    tag,
    wake: `${tag}:notify:wake`,
    silences: `${tag}:silences`,
    group: (groupKey) =>
      `${tag}:notify:group:${SAFE_GROUP_KEY.test(groupKey) ? groupKey : encodeSegment(groupKey)}`,
    subject: (subject) => `${tag}:notify:subject:${encodeSegment(subject)}`,
  };
}
