import { describe, expect, it } from 'vitest';
import { buildEmail, MAX_SUBJECT_LENGTH } from '../../../../src/notifiers/receivers/email/message.js';
import { acknowledged, notification, vehicles, vpnBack, vpnLost } from '../slack/fixtures.js';

const OPTIONS = { maxEvents: 50 };

describe('the email of a notification', () => {
  it('one event: its sentence as the subject, its details in both bodies', () => {
    const email = buildEmail(notification([vpnLost('veh-0003')]), OPTIONS);
    expect(email.subject).toBe('[WARN] veh-0003 is off the VPN: connected → disconnected');
    expect(email.text).toBe(
      [
        '[WARN] veh-0003 is off the VPN: connected → disconnected',
        '',
        'Vehicle:  veh-0003',
        'State:    connected → disconnected',
        'Since:    2026-03-04 09:59:00 UTC',
        'Severity: warning',
        'Event:    vehicle.vpn.disconnected',
        'Observed: 2026-03-04 10:00:00 UTC',
        '',
        'source fleetwatch/test · group type=vehicle.vpn.disconnected · event evt-vehicle.vpn.disconnected-veh-0003-0 · notification ntf-0001',
        '',
      ].join('\n'),
    );
    expect(email.html).toContain(
      '<tr><th align="left" style="padding:2px 16px 2px 0">State</th><td>connected → disconnected</td></tr>',
    );
  });

  it('a group: the count in the subject, what is shared, a line per entity, then …and N more', () => {
    const email = buildEmail(notification(vehicles(8), { severity: 'critical' }), {
      maxEvents: 5,
      subjectPrefix: '[fleet]',
    });
    expect(email.subject).toBe('[fleet] [CRIT] 8 vehicles are off the VPN');
    expect(email.text).toContain('Vehicles: 8\n');
    expect(email.text).toContain('- veh-0005 · since');
    expect(email.text).not.toContain('veh-0006');
    expect(email.text).toContain('…and 3 more');
    expect(email.html.match(/<li>/g)).toHaveLength(5);
    expect(email.html).toContain('<p><em>…and 3 more</em></p>');
  });

  it('a reminder says so in the subject and the bodies; a resolution is [RESOLVED]', () => {
    const reminder = buildEmail(
      notification(vehicles(2), { reminder: { firstNotifiedAt: '2026-03-04T08:00:00.000Z', count: 2 } }),
      OPTIONS,
    );
    expect(reminder.subject).toBe('[WARN] Still firing (reminder 2): 2 vehicles are off the VPN');
    expect(reminder.text).toContain('Still firing: reminder 2, first notified 2026-03-04 08:00:00 UTC.');
    const resolved = buildEmail(
      notification([vpnBack('veh-0001'), vpnBack('veh-0002', 1_000)], {
        status: 'resolved',
        severity: 'info',
      }),
      OPTIONS,
    );
    expect(resolved.subject).toBe('[RESOLVED] 2 vehicles are back on the VPN');
    expect(resolved.text).toContain('- veh-0001 · after 3m 05s');
  });

  it('an acknowledgement reads as its incident, linking to it in the console', () => {
    const email = buildEmail(notification([acknowledged('veh-0003')]), {
      ...OPTIONS,
      consoleUrl: 'https://fleet.example.com',
    });
    expect(email.subject).toContain('veh-0003 is off the VPN: acknowledged by');
    expect(email.text).toMatch(/Console, the incident: https:\/\/fleet\.example\.com\/#\/incidents\/\S+/);
  });

  it('links a single vehicle and escapes the link in the HTML', () => {
    const email = buildEmail(notification([vpnLost('veh "7" & <b>')]), {
      ...OPTIONS,
      consoleUrl: 'https://fleet.example.com',
    });
    expect(email.html).toContain(
      '<a href="https://fleet.example.com/#/vehicle/veh%20%227%22%20%26%20%3Cb%3E">vehicle veh &quot;7&quot; &amp; &lt;b&gt;</a>',
    );
    expect(email.html).not.toMatch(/<b>/);
  });

  it('escapes every piece of outside text in the HTML and keeps control characters out of both bodies', () => {
    const hostile = vpnLost('<img src=x onerror=alert(1)>\r\nBcc: x@example.com');
    hostile.source = 'fleetwatch/<i>prod</i>';
    const email = buildEmail(
      notification([hostile, vpnLost('veh-0002')], { groupLabels: { site: '<b>north</b>' } }),
      OPTIONS,
    );
    for (const tag of ['<img', '<i>', '<b>']) expect(email.html).not.toContain(tag);
    expect(email.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(email.html).toContain('fleetwatch/&lt;i&gt;prod&lt;/i&gt;');
    expect(email.html).toContain('site=&lt;b&gt;north&lt;/b&gt;');
    expect(email.text).toContain('- <img src=x onerror=alert(1)> Bcc: x@example.com · since');
    expect(email.subject).not.toMatch(/[\r\n]/);
  });

  it('stays bounded for any input: the subject, each id and the number of lines', () => {
    const long = 'v'.repeat(5_000);
    const email = buildEmail(notification([vpnLost(long), ...vehicles(1_000)]), { maxEvents: 500 });
    expect(email.subject.length).toBeLessThanOrEqual(MAX_SUBJECT_LENGTH);
    expect(email.text).not.toContain('v'.repeat(200));
    expect(email.text.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(500);
    expect(email.text).toContain('…and 501 more');
    expect(email.text.length).toBeLessThan(200_000);
  });
});
