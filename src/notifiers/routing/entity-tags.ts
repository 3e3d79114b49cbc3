import type { EntityTagConfig } from './config.js';
import type { Tags } from './labels.js';
import { compileGlob } from './matcher.js';

/** An entity's tags, by subject (`vehicle/north-7` → `{ site: 'north' }`). */
export type TagsFor = (subject: string) => Tags;

/**
 * Compiles `entity_tags` once. Every entry whose subject glob matches contributes its tags; when two
 * set the same tag, the later entry wins, so write general entries first and exceptions after.
 * Results are memoised per subject (the fleet is finite; the cache is bounded anyway).
 */
export function compileEntityTags(entries: readonly EntityTagConfig[], cacheSize = 20_000): TagsFor {
  const compiled = entries.map((entry) => ({ regexp: compileGlob(entry.match), tags: entry.tags }));
  const cache = new Map<string, Tags>();
  const empty: Tags = Object.freeze({});
  return (subject) => {
    if (compiled.length === 0) return empty;
    const cached = cache.get(subject);
    if (cached) return cached;
    const tags: Record<string, string> = {};
    for (const { regexp, tags: entryTags } of compiled) {
      if (regexp.test(subject)) Object.assign(tags, entryTags);
    }
    const frozen = Object.freeze(tags);
    if (cache.size >= cacheSize) cache.clear();
    cache.set(subject, frozen);
    return frozen;
  };
}
