import { findEntry } from '../../../events/catalogue.js';

export interface Noun {
  /** Field labels: `Vehicle`, `Vehicles`. */
  label: string;
  labelMany: string;
  one: string;
  many: string;
}

const NOUNS: Record<string, Noun> = {
  vehicle: { label: 'Vehicle', labelMany: 'Vehicles', one: 'vehicle', many: 'vehicles' },
  robot: { label: 'Robot', labelMany: 'Robots', one: 'robot', many: 'robots' },
  upstream: { label: 'Upstream', labelMany: 'Upstreams', one: 'upstream', many: 'upstreams' },
  receiver: { label: 'Receiver', labelMany: 'Receivers', one: 'receiver', many: 'receivers' },
  store: { label: 'Store', labelMany: 'Stores', one: 'store', many: 'stores' },
  incident: { label: 'Incident', labelMany: 'Incidents', one: 'incident', many: 'incidents' },
};
const ENTITY: Noun = { label: 'Entity', labelMany: 'Entities', one: 'entity', many: 'entities' };

/** The entity an event is about, from its `subject` (`vehicle/veh-0003` → vehicle, veh-0003). */
export function entityOf(subject: string): { kind: string; id: string; noun: Noun } {
  const slash = subject.indexOf('/');
  const kind = slash === -1 ? '' : subject.slice(0, slash);
  return { kind, id: subject.slice(slash + 1), noun: NOUNS[kind] ?? ENTITY };
}

/**
 * What a group of entities did, in the plural (the catalogue's `says.many`): `40 vehicles lost
 * their VPN connection`; `1 vehicle …` is left to `describeEvent`.
 */
export function groupPhrase(type: string, count: number, noun: Noun): string {
  const what = count === 1 ? noun.one : noun.many;
  const entry = findEntry(type);
  if (!entry) return `${count} ${what}: ${type}`;
  return `${count} ${what} ${entry.says.many}`;
}
