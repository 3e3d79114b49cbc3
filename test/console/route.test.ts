import { describe, expect, it } from 'vitest';
import { currentFilters, parseRoute } from '../../console/src/lib/route.js';

const read = (query: URLSearchParams) => ({
  state: query.get('state') ?? 'open',
  severity: query.get('severity') ?? '',
});

describe("a page's filters from the URL", () => {
  it("keeps the viewer's changes while the URL stays", () => {
    const { query } = parseRoute('#/incidents?state=acknowledged');
    expect(currentFilters({ query, values: { state: 'closed', severity: '' } }, query, read)).toEqual({
      state: 'closed',
      severity: '',
    });
  });

  it('reads them again from a new URL, and from the same URL followed again', () => {
    const first = parseRoute('#/incidents?state=acknowledged').query;
    const held = { query: first, values: { state: 'closed', severity: 'critical' } };
    expect(
      currentFilters(held, parseRoute('#/incidents?state=silenced&severity=warning').query, read),
    ).toEqual({
      state: 'silenced',
      severity: 'warning',
    });
    // Back to the first link: each hash change is a new query, so the link applies again.
    expect(currentFilters(held, parseRoute('#/incidents?state=acknowledged').query, read)).toEqual({
      state: 'acknowledged',
      severity: '',
    });
    expect(currentFilters(held, parseRoute('#/incidents').query, read)).toEqual({
      state: 'open',
      severity: '',
    });
  });
});
