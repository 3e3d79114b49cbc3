import { InvalidArgumentError } from 'commander';
import { parseDuration } from '../config/duration.js';

/** Commander parsers that turn a bad value into a one-line usage error naming what was expected. */
export function durationArgument(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0)
    throw new InvalidArgumentError('expected a duration such as 30s, 5m or 1h.');
  return ms;
}

export function positiveIntegerArgument(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('expected a whole number.');
  return number;
}

export function portArgument(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidArgumentError('expected a port number from 0 to 65535.');
  }
  return port;
}
