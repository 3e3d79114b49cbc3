import type { Command } from 'commander';
import {
  POWER_POLL_INTERVAL,
  type PowerWaitOutcome,
  type PowerWaitProgress,
  waitForPowerState,
} from '../../operations/power-command.js';
import type { PowerStatus, PowerTarget } from '../../upstream/schemas/v1.js';
import { durationOption } from '../arguments.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { writeJson, writeLine } from '../io.js';
import { addReadCommand } from '../read-command.js';
import { describeAge, describeElapsed } from '../time.js';

interface RequestOptions {
  wait?: boolean;
  timeout: number;
  interval: number;
  json?: boolean;
}

export function registerPowerCommand(program: Command, context: CliContext): void {
  const power = program.command('power').description("read or change a vehicle's power state");

  addReadCommand(power, context, {
    name: 'status',
    description: 'show the most recently reported power state and any pending command',
    args: [['vehicleId', 'vehicle id as listed by `fleetwatch vehicles`']],
    jsonHelp: 'print the status as JSON',
    read: ([vehicleId = ''], signal) => context.upstream().fleet.getPowerStatus(vehicleId, { signal }),
    view: ([vehicleId = '']) => ({
      json: (status) => ({ vehicleId, ...status }),
      text: (status) => describeStatus(vehicleId, status),
    }),
  });

  for (const target of ['on', 'off'] as const) {
    power
      .command(target)
      .description(`request power ${target}; with --wait, wait until the vehicle reports ${target}`)
      .argument('<vehicleId>', 'vehicle id as listed by `fleetwatch vehicles`')
      .option('--wait', `poll power status until the vehicle reports ${target} with nothing pending`)
      .addOption(
        durationOption(
          '--timeout <duration>',
          'how long --wait waits',
          { min: 100, max: 3_600_000 },
          5 * 60_000,
        ),
      )
      .addOption(
        durationOption(
          '--interval <duration>',
          'how often --wait polls',
          { min: POWER_POLL_INTERVAL.minMs, max: POWER_POLL_INTERVAL.maxMs },
          2_000,
        ),
      )
      .option('--json', 'print the outcome as JSON')
      .addHelpText(
        'after',
        `\nExit status: 0 accepted (or, with --wait, done), 1 failed, 3 authentication failed,\n4 vehicle not found, not available to this client or not power-capable, 5 --wait timed out,\n6 forbidden for this client, 130 interrupted. A 200 in place of the spec's 202 is accepted, with a warning.`,
      )
      .action(async (vehicleId: string, options: RequestOptions, command: Command) => {
        // Checked before anything is sent: without --wait these would be ignored, and the operator
        // who typed them believes the command waits.
        if (!options.wait) {
          for (const name of ['timeout', 'interval'] as const) {
            if (command.getOptionValueSource(name) === 'cli') {
              command.error(`option '--${name}' only applies with --wait; add --wait, or leave it out`, {
                exitCode: ExitCode.usage,
                code: 'fleetwatch.optionNeedsWait',
              });
            }
          }
        }
        await requestPower(context, vehicleId, target, options);
      });
  }
}

async function requestPower(
  context: CliContext,
  vehicleId: string,
  target: PowerTarget,
  options: RequestOptions,
): Promise<void> {
  const { io } = context;
  const fleet = context.upstream().fleet;
  const accepted = await fleet.requestPower(vehicleId, target, { signal: io.signal });
  const warning = accepted.warning === undefined ? {} : { warning: accepted.warning };
  if (accepted.warning) writeLine(io.stderr, `fleetwatch: warning: ${accepted.warning}`);
  if (!options.wait) {
    if (options.json) {
      return writeJson(io.stdout, { vehicleId, requested: target, outcome: 'accepted', ...warning });
    }
    writeLine(
      io.stdout,
      `power ${target} accepted for ${vehicleId}; the vehicle has not necessarily acted yet (use --wait to follow it)`,
    );
    return;
  }
  const progress = progressPrinter(context, vehicleId, target);
  const outcome = await waitForPowerState(fleet, vehicleId, target, {
    timeoutMs: options.timeout,
    intervalMs: options.interval,
    signal: io.signal,
    onProgress: progress.update,
  });
  progress.finish();
  reportOutcome(context, vehicleId, target, outcome, options, warning);
}

function reportOutcome(
  context: CliContext,
  vehicleId: string,
  target: PowerTarget,
  outcome: PowerWaitOutcome,
  options: RequestOptions,
  warning: { warning?: string },
): void {
  const { io } = context;
  if (options.json) {
    writeJson(io.stdout, {
      vehicleId,
      requested: target,
      outcome: outcome.kind,
      ...warning,
      elapsedMs: outcome.elapsedMs,
      ...('status' in outcome && outcome.status ? { status: outcome.status } : {}),
      ...(outcome.kind === 'failed' ? { reason: outcome.reason } : {}),
    });
  }
  const took = describeElapsed(outcome.elapsedMs);
  switch (outcome.kind) {
    case 'completed':
      if (!options.json) writeLine(io.stdout, `${vehicleId} reports power ${target} (took ${took})`);
      return;
    case 'failed':
      writeLine(io.stderr, `fleetwatch: ${vehicleId}: ${outcome.reason}`);
      context.exitCode = ExitCode.failed;
      return;
    case 'timed_out': {
      const last = outcome.status ? `; last report: ${describeState(outcome.status)}` : '';
      const error = outcome.lastError ? `; last error: ${outcome.lastError.message}` : '';
      writeLine(
        io.stderr,
        `fleetwatch: ${vehicleId} did not report power ${target} within ${took}${last}${error}`,
      );
      context.exitCode = ExitCode.timedOut;
      return;
    }
    case 'aborted':
      writeLine(io.stderr, `fleetwatch: stopped waiting for ${vehicleId} after ${took}`);
      context.exitCode = ExitCode.interrupted;
      return;
  }
}

/** One progress line on stderr: rewritten in place on a terminal, one line per change elsewhere. */
function progressPrinter(context: CliContext, vehicleId: string, target: PowerTarget) {
  const { stderr } = context.io;
  const live = stderr.isTTY === true;
  let last = '';
  return {
    update(progress: PowerWaitProgress): void {
      const detail = progress.error
        ? `upstream: ${progress.error.message}`
        : progress.status
          ? describeState(progress.status)
          : 'no report yet';
      const line = `waiting for ${vehicleId} to report ${target}: ${detail}`;
      if (live) {
        stderr.write(`\r\x1b[2K${line} (${describeElapsed(progress.elapsedMs)})`);
      } else if (line !== last) {
        stderr.write(`${line}\n`);
      }
      last = line;
    },
    finish(): void {
      if (live && last) stderr.write('\r\x1b[2K');
    },
  };
}

function describeState(status: PowerStatus): string {
  const pending = status.pendingCommand ? `, ${status.pendingCommand.state} pending` : '';
  return `${status.state}${pending}`;
}

function describeStatus(vehicleId: string, status: PowerStatus): string {
  const pending = status.pendingCommand
    ? `; power ${status.pendingCommand.state} pending`
    : '; nothing pending';
  const reported = status.updatedAt
    ? `reported ${describeAge(status.updatedAt)} (${status.updatedAt})`
    : 'never reported';
  return `${vehicleId}: ${status.state}${pending}; ${reported}`;
}
