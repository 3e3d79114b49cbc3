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
