import { describe, expect, it, vi } from 'vitest';
import { AlertStore, SUBJECT_SCANS } from '../../../../src/notifiers/receivers/alertmanager/alert-store.js';
import type { StoredAlert } from '../../../../src/notifiers/receivers/alertmanager/alerts.js';
import { suiteConnection, uniquePrefix } from '../../../support/redis.js';

function alert(name: string): StoredAlert {
  return { labels: { alertname: name }, annotations: {}, startsAt: '2026-03-01T10:00:00.000Z', firedAt: 1 };
}

describe('AlertStore', () => {
  const prefix = uniquePrefix('am');
  const redis = suiteConnection(prefix);

  it('saves and loads more alerts than one command takes, by incident and by subject', async () => {
    const store = new AlertStore({ connection: redis, key: `${prefix}:alertmanager:big` });
    // 3,000 subjects, two incidents each; one subject holds `#` in its id.
    const subjects = Array.from({ length: 3_000 }, (_, i) => (i === 7 ? 'robot/odd#7' : `robot/R-${i}`));
    const writes = new Map<string, StoredAlert>();
    for (const subject of subjects) {
      writes.set(`${subject}#health`, alert(`${subject} health`));
      writes.set(`${subject}#lease`, alert(`${subject} lease`));
    }
    await store.save(writes);
    expect(await redis.hlen(`${prefix}:alertmanager:big`)).toBe(6_000);

    const byIncident = await store.load([...writes.keys()].slice(0, 2_500), []);
    expect(byIncident.size).toBe(2_500);

    // A mass removal (many subjects) is one pass over the hash, not one per subject.
    const scans = vi.spyOn(redis, 'hscan');
    try {
      const removed = subjects.slice(0, 1_000);
      const bySubject = await store.load([], removed);
      expect(bySubject.size).toBe(2_000);
      expect(bySubject.get('robot/odd#7#lease')?.labels.alertname).toBe('robot/odd#7 lease');
      expect(bySubject.has('robot/R-1000#health')).toBe(false);
      const passes = scans.mock.calls.filter(([, cursor]) => String(cursor) === '0').length;
      expect(passes).toBe(1);

      // A few subjects: one pattern scan each.
      scans.mockClear();
      const few = await store.load([], subjects.slice(0, SUBJECT_SCANS));
      expect(few.size).toBe(2 * SUBJECT_SCANS);
      expect(scans.mock.calls.filter(([, cursor]) => String(cursor) === '0')).toHaveLength(SUBJECT_SCANS);
    } finally {
      scans.mockRestore();
    }
  });
});
