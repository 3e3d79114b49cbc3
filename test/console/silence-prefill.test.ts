import { describe, expect, it } from 'vitest';
import { PREFILL_LIMITS, silencePrefill } from '../../console/src/lib/silence-prefill.js';
import { silenceUrl } from '../../src/notifiers/notifier.js';
import { vehicles, vpnLost } from '../notifiers/receivers/slack/fixtures.js';

/** The query of a hash route, as the console's router reads it (router.ts, which needs a browser). */
const prefillOf = (hash: string) => silencePrefill(new URLSearchParams(hash.slice(hash.indexOf('?') + 1)));

describe('the New silence form filled from a link', () => {
  it('reads one label=value line per matchers, the comment and the duration', () => {
    expect(
      prefillOf(
        '#/silences/new?matchers=subject%3Dvehicle%2Fveh-1&matchers=type%3Dvehicle.vpn.*&comment=re%3A+veh-1+lost+its+VPN&duration=30m',
      ),
    ).toEqual({
      matchers: 'subject=vehicle/veh-1\ntype=vehicle.vpn.*',
      comment: 're: veh-1 lost its VPN',
      duration: '30m',
    });
  });

  it('keeps the older type= and subject= parameters, several lines in one value, and defaults', () => {
    expect(prefillOf('#/silences/new?type=vehicle.vpn.*&subject=vehicle/veh-0003')).toEqual({
      matchers: 'type=vehicle.vpn.*\nsubject=vehicle/veh-0003',
      comment: '',
      duration: '2h',
    });
    expect(
      prefillOf(`#/silences/new?matchers=${encodeURIComponent('site=north\n\n  kind=robot \nsite=north')}`)
        .matchers,
    ).toBe('site=north\nkind=robot');
  });

  it('is bounded: at most 50 lines, long lines and comments cut away', () => {
    const many = Array.from({ length: 80 }, (_, index) => `matchers=subject%3Dvehicle%2Fv${index}`).join('&');
    const filled = prefillOf(
      `#/silences/new?${many}&matchers=type%3D${'x'.repeat(600)}&comment=${'c'.repeat(5_000)}`,
    );
    expect(filled.matchers.split('\n')).toHaveLength(PREFILL_LIMITS.lines);
    expect(filled.matchers).not.toContain('xxx');
    expect(filled.comment).toHaveLength(PREFILL_LIMITS.comment);
  });

  it('fills in what a chat message links to', () => {
    const base = 'https://fleetwatch.example.com';
    const one = silenceUrl(base, [vpnLost('veh-0003')], 're: veh-0003 is off the VPN') ?? '';
    expect(one.startsWith(`${base}/#/silences/new?`)).toBe(true);
    expect(prefillOf(one.slice(base.length + 1))).toEqual({
      matchers: 'type=vehicle.vpn.disconnected\nsubject=vehicle/veh-0003',
      comment: 're: veh-0003 is off the VPN',
      duration: '2h',
    });
    const group = silenceUrl(base, vehicles(3), 're: 3 vehicles are off the VPN') ?? '';
    expect(prefillOf(group.slice(base.length + 1)).matchers).toBe(
      'type=vehicle.vpn.disconnected\nsubject=vehicle/veh-0001\nsubject=vehicle/veh-0002\nsubject=vehicle/veh-0003',
    );
  });
});
