import type { ContractViolation, SimStats } from './types.js';

const RECENT_VIOLATIONS = 50;

/** Request, fault and contract-violation counters for the control API. */
export class Stats {
  private data!: SimStats;

  constructor() {
    this.reset();
  }

  reset(): void {
    this.data = {
      since: new Date().toISOString(),
      tokenRequests: { total: 0, byStatus: {} },
      requests: {},
      faults: { status: 0, timeout: 0, malformed: 0, delayed: 0, slowBody: 0 },
      contractViolations: { total: 0, recent: [] },
    };
  }

  request(operation: string, status: number | 'timeout'): void {
    let byStatus = this.data.requests[operation];
    if (!byStatus) {
      byStatus = {};
      this.data.requests[operation] = byStatus;
    }
    const key = String(status);
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    if (operation === 'token') {
      const t = this.data.tokenRequests;
      t.total++;
      t.byStatus[key] = (t.byStatus[key] ?? 0) + 1;
    }
  }

  fault(kind: keyof SimStats['faults']): void {
    this.data.faults[kind]++;
  }

  violation(operation: string, side: ContractViolation['side'], message: string): void {
    const v = this.data.contractViolations;
    v.total++;
    v.recent.push({ at: new Date().toISOString(), operation, side, message });
    if (v.recent.length > RECENT_VIOLATIONS) v.recent.shift();
  }

  snapshot(): SimStats {
    return structuredClone(this.data);
  }
}
