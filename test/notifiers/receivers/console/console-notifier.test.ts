import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import {
  ConsoleNotifier,
  consoleNotifierFactory,
  formatNotification,
  useColor,
} from '../../../../src/notifiers/receivers/console/index.js';
import { receiversSchema } from '../../../../src/notifiers/receivers/kinds.js';
import { acknowledged, notification, vehicleId, vehicles, vpnBack, vpnLost } from '../slack/fixtures.js';

const utc = (iso: string) => iso.slice(11, 19);
const plain = { color: false, maxEvents: 3, clock: utc };
const deps = { logger: createLogger({ level: 'silent' }), secrets: new SecretRegistry() };

describe('console receiver: format', () => {
  it('prints one event as one line with the time, a severity mark and the describeEvent sentence', () => {
    expect(formatNotification(notification([vpnLost('veh-0004')]), plain)).toBe(
      '10:00:00  WARN  veh-0004 is off the VPN: connected → disconnected\n',
    );
  });

  it('marks a resolved notification OK and says how long the incident lasted', () => {
    const text = formatNotification(notification([vpnBack('veh-0004')], { status: 'resolved' }), plain);
    expect(text).toBe('10:00:00  OK    veh-0004 is back on the VPN: disconnected → connected after 3m 05s\n');
  });

  it('says who acknowledged an incident and why', () => {
    expect(formatNotification(notification([acknowledged('veh-0004')]), plain)).toBe(
      '10:00:00  INFO  veh-0004 is off the VPN: acknowledged by dana: on it\n',
    );
  });

  it('lists a group under a count, newest time first, and counts what it leaves out', () => {
    const text = formatNotification(notification(vehicles(5)), plain);
    expect(text.split('\n')).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d {2}WARN {2}5 events: vehicle\.vpn\.disconnected$/),
      `                • ${vehicleId(1)} is off the VPN: connected → disconnected`,
      `                • ${vehicleId(2)} is off the VPN: connected → disconnected`,
      `                • ${vehicleId(3)} is off the VPN: connected → disconnected`,
      '                • …and 2 more',
      '',
    ]);
  });

  it('says when a notification is a reminder, and mixes types', () => {
    const text = formatNotification(
      notification([vpnLost('veh-0001'), vpnBack('veh-0002', 1_000)], {
        reminder: { firstNotifiedAt: '2026-03-04T09:00:00.000Z', count: 2 },
      }),
      plain,
    );
    expect(text.split('\n')[0]).toBe('10:00:01  WARN  still firing (reminder 2): 2 events of 2 types');
  });

  it('keeps control characters from an event out of the terminal', () => {
    const text = formatNotification(notification([vpnLost('veh\u001b[2J-0001\nfake')]), plain);
    expect(text).not.toContain('\u001b');
    expect(text.trimEnd().split('\n')).toHaveLength(1);
  });

  it('colours the mark only when asked', () => {
    const coloured = formatNotification(notification([vpnLost('veh-0001')], { severity: 'critical' }), {
      ...plain,
      color: true,
    });
    expect(coloured).toContain('\u001b[1;31mCRIT\u001b[0m');
    expect(useColor('auto', { isTTY: true }, {})).toBe(true);
    expect(useColor('auto', { isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor('auto', { isTTY: false }, {})).toBe(false);
    expect(useColor('always', { isTTY: false }, { NO_COLOR: '1' })).toBe(true);
    expect(useColor('never', { isTTY: true }, {})).toBe(false);
  });
});

describe('console receiver: delivery and config', () => {
  it('writes the lines to its stream and reports them delivered', async () => {
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk) => {
      printed += String(chunk);
    });
    const config = consoleNotifierFactory.configSchema.parse({ kind: 'console', name: 'terminal' });
    const notifier = new ConsoleNotifier(config, deps, { output });
    expect(notifier.kind).toBe('console');
    expect(await notifier.deliver(notification([vpnLost('veh-0007')]), { attempt: 1 })).toEqual({
      kind: 'delivered',
    });
    expect(printed).toContain('veh-0007 is off the VPN');
  });

  it('asks for a retry when its stream is gone', async () => {
    const output = new PassThrough();
    output.destroy();
    const config = consoleNotifierFactory.configSchema.parse({ kind: 'console', name: 'terminal' });
    const notifier = new ConsoleNotifier(config, deps, { output });
    expect((await notifier.deliver(notification([vpnLost('veh-0007')]), { attempt: 1 })).kind).toBe('retry');
  });

  it('is a receiver kind of the config file, with defaults and strict keys', () => {
    const [receiver] = receiversSchema.parse([{ kind: 'console', name: 'terminal' }]);
    expect(receiver).toEqual({
      kind: 'console',
      name: 'terminal',
      stream: 'stdout',
      color: 'auto',
      max_events: 20,
      max_hold: 300_000,
    });
    expect(consoleNotifierFactory.mask(receiver as never)).toEqual(receiver);
    expect(receiversSchema.safeParse([{ kind: 'console', name: 'x', url: 'http://x' }]).success).toBe(false);
    expect(receiversSchema.safeParse([{ kind: 'console', name: 'x', stream: 'file' }]).success).toBe(false);
  });
});
