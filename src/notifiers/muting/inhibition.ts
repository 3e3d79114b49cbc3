import { CATALOGUE } from '../../events/catalogue.js';
import { incidentSource } from '../../events/detectors/incident-status.js';
import type { FleetEvent } from '../../events/types.js';
import { incidentField } from '../../store/incidents.js';
import type { TagsFor } from '../routing/entity-tags.js';
import { incidentLabels, incidentOf, type Labels, labelsFor } from '../routing/labels.js';
import { compileGlob, compileMatcher, type Matcher } from '../routing/matcher.js';
import type { InhibitRuleConfig } from './config.js';
import type { IncidentRecord } from './firing-incidents.js';
import type { Muted } from './muted.js';

/**
 * Inhibition rules (Alertmanager's `inhibit_rules`): while an incident matching `source_matchers`
 * fires, events matching `target_matchers` whose `equal` labels have the same values (a label
 * absent on both counts as equal) are kept out of notifications. An incident never inhibits its
 * own events (an event matching both sides of a rule). Matchers are the route language
 * (routing/matcher.ts): a target matcher for `vehicle.unreachable` also covers the
 * `vehicle.reachable` that closes it.
 *
 * Two questions, asked at two moments (mutes.ts, the flusher):
 * - "is it inhibited now?" — a source fires now. Asked of an incident opened muted before it is
 *   announced (reminders): once its sources resolved it is announced, if it still fires.
 * - "was it caused by a source?" — a source fires now, or fired over the event's time (it resolved
 *   since: its tombstone's span covers the event). Asked when an event is about to be sent: a
 *   robot that went down during a gateway outage is the outage's, even when the gateway recovered
 *   before the robot's notification was due.
 *
 * This module is pure: the incidents come from `FiringIncidents` (Redis), the snapshots the
 * wait reads (see `candidateSources`) from the caller.
 */

export interface InhibitRule {
  name: string;
  source: Matcher;
  target: Matcher;
  equal: readonly string[];
  /** The incidents (key and firing type) the source matchers can match. */
  sourceIncidents: readonly { key: string; type: string }[];
  /** The only subjects a source can have, when `source_matchers.subject` names them literally. */
  literalSubjects?: readonly string[];
}

const GLOB_SPECIAL = /[*?[\\]/;

export function compileInhibitRules(rules: readonly InhibitRuleConfig[]): InhibitRule[] {
  return rules.map((rule) => {
    const source = compileMatcher(rule.source_matchers);
    const types = rule.source_matchers.type;
    const globs = types === undefined ? [] : (typeof types === 'string' ? [types] : types).map(compileGlob);
    const sourceIncidents = CATALOGUE.flatMap((entry) =>
      entry.incident?.role === 'fires' && (globs.length === 0 || globs.some((glob) => glob.test(entry.type)))
        ? [{ key: entry.incident.key, type: entry.type }]
        : [],
    );
    const subjects = rule.source_matchers.subject;
    const list = subjects === undefined ? [] : typeof subjects === 'string' ? [subjects] : subjects;
    const literal = list.length > 0 && list.every((subject) => !GLOB_SPECIAL.test(subject));
    return {
      name: rule.name,
      source,
      target: compileMatcher(rule.target_matchers),
      equal: [...rule.equal],
      sourceIncidents,
      ...(literal ? { literalSubjects: list } : {}),
    };
  });
}

/**
 * The source incidents of `rule` that could inhibit `event` and can be found without a scan (the
 * ones the wait reads): the
 * event's own subject when the rule asks for an equal `subject`, else the subjects the source
 * matchers name literally (`upstream/robots`). A rule with neither has none: it inhibits through
 * the recorded incidents alone, with no wait.
 */
export function candidateSources(
  rule: InhibitRule,
  event: Pick<FleetEvent, 'type' | 'subject'>,
): { subject: string; key: string; type: string }[] {
  let subjects: readonly string[];
  if (rule.equal.includes('subject')) {
    subjects = rule.literalSubjects && !rule.literalSubjects.includes(event.subject) ? [] : [event.subject];
  } else {
    subjects = rule.literalSubjects ?? [];
  }
  const own = incidentOf(event.type)?.key;
  return subjects.flatMap((subject) =>
    rule.sourceIncidents.flatMap(({ key, type }) =>
      (subject === event.subject && key === own) || !incidentSource(subject, key)
        ? []
        : [{ subject, key, type }],
    ),
  );
}

/** The event an incident record stands for, enough for labels and matchers. */
function eventOf(record: Pick<IncidentRecord, 'type' | 'subject' | 'severity'>): FleetEvent {
  return {
    specversion: '1.0',
    id: '',
    source: '',
    type: record.type,
    subject: record.subject,
    time: '',
    datacontenttype: 'application/json',
    data: { severity: record.severity },
  };
}

/** The values of `rule.equal` in `labels` (an absent label counts as empty), as one key. */
function equalKey(rule: InhibitRule, labels: Labels): string {
  return JSON.stringify(rule.equal.map((name) => labels[name] ?? ''));
}

interface Source {
  record: IncidentRecord;
  labels: Labels;
}

/** A recorded incident as the rules see it: its labels, and per rule whether it is a source and its `equal` key. */
interface Labelled extends Source {
  /** Per rule (same order): the `equal` key when the rule's source matchers match, else undefined. */
  keys: Array<string | undefined>;
  /** The last update that found the record in its reading (`SourceIndex.update`). */
  seen: number;
}

/** What a check asks (see the module comment). */
export interface InhibitionQuestion {
  /** Also count a resolved source whose span (since → resolved) covers the event's time. */
  covering: boolean;
}

/**
 * The recorded incidents indexed for the rules, brought up to date from one reading to the next
 * by what changed: records are immutable and `FiringIncidents` hands out the same one while it is
 * unchanged, so an update labels only the records it has not seen and drops only the ones gone.
 * At 100,000 entities about 8,500 incidents are recorded; building the index anew at each
 * reading held the event loop 8–14 ms (up to 40) each time one of them moved.
 */
class SourceIndex {
  /** Each incident's labels and rule keys, by record. */
  readonly #labelled = new Map<IncidentRecord, Labelled>();
  /**
   * Per rule (same order): its source incidents by the values of its `equal` labels (`equalKey`),
   * so a check looks at the sources that can inhibit the event, not at every incident of a large
   * fleet.
   */
  readonly byEqual: Map<string, Set<Labelled>>[];
  /** Per rule: its source incidents by subject and incident key (`recorded`). */
  readonly bySubject: Map<string, IncidentRecord>[];
  #updates = 0;

  constructor(rules: number) {
    this.byEqual = Array.from({ length: rules }, () => new Map());
    this.bySubject = Array.from({ length: rules }, () => new Map());
  }

  /**
   * Makes the index hold exactly `incidents` (each record once, as `FiringIncidents` hands them
   * out); `label` labels a record it has not seen.
   */
  update(incidents: readonly IncidentRecord[], label: (record: IncidentRecord) => Labelled): void {
    const update = ++this.#updates;
    const added: IncidentRecord[] = [];
    for (const record of incidents) {
      const known = this.#labelled.get(record);
      if (known) known.seen = update;
      else added.push(record);
    }
    // Some known record is not in this reading: find which (a walk, no allocation).
    if (this.#labelled.size > incidents.length - added.length) {
      for (const entry of this.#labelled.values()) if (entry.seen !== update) this.#remove(entry);
    }
    for (const record of added) {
      const entry = label(record);
      entry.seen = update;
      this.#add(entry);
    }
  }

  #add(entry: Labelled): void {
    this.#labelled.set(entry.record, entry);
    entry.keys.forEach((key, index) => {
      if (key === undefined) return;
      const byKey = this.byEqual[index]!;
      const sources = byKey.get(key);
      if (sources) sources.add(entry);
      else byKey.set(key, new Set([entry]));
      this.bySubject[index]!.set(incidentField(entry.record.subject, entry.record.key), entry.record);
    });
  }

  #remove(entry: Labelled): void {
    this.#labelled.delete(entry.record);
    entry.keys.forEach((key, index) => {
      if (key === undefined) return;
      const byKey = this.byEqual[index]!;
      const sources = byKey.get(key);
      sources?.delete(entry);
      if (sources?.size === 0) byKey.delete(key);
      // Removals come before additions: a newer record of the same incident is not there yet.
      this.bySubject[index]!.delete(incidentField(entry.record.subject, entry.record.key));
    });
  }
}

/**
 * The rules with the incidents known at one moment; cheap to ask about many events.
 *
 * A reading built from the one before (`previous`, the same rules and tags) takes over its index
 * and brings it up to date: the one before then answers as this one does. The muting keeps only
 * the latest reading, and a judgement that holds one across a read sees newer incidents, never
 * older ones.
 */
export class Inhibition {
  readonly rules: readonly InhibitRule[];
  readonly #tagsFor: TagsFor;
  readonly #index: SourceIndex;
  readonly #incidents: readonly IncidentRecord[];

  constructor(
    rules: readonly InhibitRule[],
    tagsFor: TagsFor,
    incidents: readonly IncidentRecord[],
    previous?: Inhibition,
  ) {
    this.rules = rules;
    this.#tagsFor = tagsFor;
    this.#incidents = incidents;
    this.#index =
      previous && previous.rules === rules && previous.#tagsFor === tagsFor
        ? previous.#index
        : new SourceIndex(rules.length);
    this.#index.update(incidents, (record) => this.#label(record));
  }

  /**
   * Whether this reading was built from exactly these: then it is the reading of them, as it is
   * (`FiringIncidents.list` hands out the same array while nothing changed).
   */
  builtFrom(rules: readonly InhibitRule[], tagsFor: TagsFor, incidents: readonly IncidentRecord[]): boolean {
    return this.rules === rules && this.#tagsFor === tagsFor && this.#incidents === incidents;
  }

  #label(record: IncidentRecord): Labelled {
    const labels = labelsFor(eventOf(record), this.#tagsFor(record.subject));
    const keys = this.rules.map((rule) =>
      rule.source.matchesLabels(labels) ? equalKey(rule, labels) : undefined,
    );
    return { record, labels, keys, seen: 0 };
  }

  /** The rules whose target matchers match the event. */
  rulesFor(event: FleetEvent): InhibitRule[] {
    if (this.rules.length === 0) return [];
    const tags = this.#tagsFor(event.subject);
    return this.rules.filter((rule) => rule.target.matches(event, tags));
  }

  /**
   * Why the event is inhibited, if it is: by a recorded source incident, or by one of `extra`
   * (incidents a snapshot shows firing before their event reached the recorded ones).
   */
  check(
    event: FleetEvent,
    question: InhibitionQuestion,
    extra: readonly IncidentRecord[] = [],
  ): Muted | undefined {
    if (this.rules.length === 0) return undefined;
    const tags = this.#tagsFor(event.subject);
    const target = incidentLabels(labelsFor(event, tags));
    const own = incidentOf(event.type)?.key;
    const time = Date.parse(event.time);
    const counts = (record: IncidentRecord): boolean => {
      if (record.subject === event.subject && record.key === own) return false;
      if (record.firing) return true;
      return question.covering && Number.isFinite(time) && record.since <= time && time <= record.at;
    };
    for (const [index, rule] of this.rules.entries()) {
      if (!rule.target.matches(event, tags)) continue;
      const key = equalKey(rule, target);
      // The recorded sources come indexed by that key; the extra ones are few and checked here.
      const more = extra
        .map((record) => ({ record, labels: labelsFor(eventOf(record), this.#tagsFor(record.subject)) }))
        .filter(
          (source) => rule.source.matchesLabels(source.labels) && equalKey(rule, source.labels) === key,
        );
      for (const sources of [this.#index.byEqual[index]?.get(key) ?? [], more]) {
        for (const source of sources) {
          if (!counts(source.record)) continue;
          return {
            reason: 'inhibited',
            by: rule.name,
            source: { type: source.record.type, subject: source.record.subject },
          };
        }
      }
    }
    return undefined;
  }

  /** The recorded incident of `subject` and `key` that `rule`'s source matchers match, if any. */
  recorded(rule: InhibitRule, subject: string, key: string): IncidentRecord | undefined {
    return this.#index.bySubject[this.rules.indexOf(rule)]?.get(incidentField(subject, key));
  }
}
