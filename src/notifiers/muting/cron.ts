import { validateDetailed } from 'node-cron';

/**
 * Cron schedules in a time zone, looked at backwards: "when did this schedule last fire at or
 * before T?" — which node-cron cannot answer (it only looks forward from the wall clock, from a
 * running task). node-cron still parses and validates the expression, so a schedule means here
 * exactly what it means to node-cron: 5 fields (minute hour day-of-month month day-of-week) or 6
 * (seconds first), names (`mon`, `jan`), ranges, steps, `L`, `L-3`, `15W`, `LW`, `5L`, `1#2`,
 * `@daily` and friends; day of month and day of week must BOTH match (node-cron's rule, not
 * Vixie cron's either-or).
 *
 * Time zones and daylight saving time. A schedule names wall-clock times in its zone; it fires at
 * the first instant that zone's clock reads the named time:
 * - a time that does not exist (the spring-forward gap, e.g. 02:30 in Europe/Berlin on the last
 *   Sunday of March) fires when the clock jumps over it (03:00 CEST) — it is not skipped;
 * - a time that happens twice (the autumn fall-back hour) fires once, the first time.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;

export interface CronSchedule {
  readonly expression: string;
  /** Descending, so a backward scan meets the latest time first. */
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly months: ReadonlySet<number>;
  readonly daysOfMonth: readonly (number | string)[];
  readonly daysOfWeek: readonly (number | string)[];
}

const FIELD_LABELS: Record<string, string> = {
  second: 'second',
  minute: 'minute',
  hour: 'hour',
  dayOfMonth: 'day-of-month',
  month: 'month',
  dayOfWeek: 'day-of-week',
};

/** Why an expression is not a usable schedule, or undefined when it is. */
export function cronProblem(expression: unknown): string | undefined {
  if (typeof expression !== 'string' || expression.trim() === '') {
    return 'must be a cron expression such as "0 22 * * sat" (minute hour day-of-month month day-of-week)';
  }
  const result = validateDetailed(expression);
  if (result.valid) return undefined;
  const problem = result.errors[0];
  if (!problem) return `"${expression}" is not a valid cron expression`;
  if (problem.field === 'expression') {
    return `"${expression}" is not a valid cron expression: ${problem.message} (5 or 6 fields: [second] minute hour day-of-month month day-of-week)`;
  }
  if (/impossible day of month/.test(problem.message)) {
    return `"${expression}" never fires: that day of month never occurs in those months`;
  }
  const label = FIELD_LABELS[problem.field] ?? problem.field;
  return `"${expression}" is not a valid cron expression: "${problem.value ?? ''}" is not a valid ${label} field`;
}

/** Parses a schedule; throws on an invalid one (validate with `cronProblem` first). */
export function parseCron(expression: string): CronSchedule {
  const result = validateDetailed(expression);
  if (!result.valid || !result.fields) throw new Error(cronProblem(expression) ?? 'invalid cron expression');
  const { fields } = result;
  const descending = (values: readonly (number | string)[]) =>
    [...new Set(values.filter((value): value is number => typeof value === 'number'))].sort((a, b) => b - a);
  return {
    expression,
    seconds: descending(fields.second),
    minutes: descending(fields.minute),
    hours: descending(fields.hour),
    months: new Set(fields.month),
    daysOfMonth: fields.dayOfMonth,
    daysOfWeek: fields.dayOfWeek,
  };
}

// --- calendar days (node-cron's day tokens) ----------------------------------------------------

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function weekdayOf(year: number, month: number, day: number): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay();
}

/** The weekday (Mon–Fri) nearest to `target` within the month, or -1 (cron's `W`). */
function nearestWeekday(year: number, month: number, target: number): number {
  const last = lastDayOfMonth(year, month);
  if (target < 1 || target > last) return -1;
  const weekday = weekdayOf(year, month, target);
  if (weekday === 6) return target === 1 ? target + 2 : target - 1;
  if (weekday === 0) return target === last ? target - 2 : target + 1;
  return target;
}

function matchesDayOfMonth(field: readonly (number | string)[], year: number, month: number, day: number) {
  for (const value of field) {
    if (value === day) return true;
    if (typeof value !== 'string') continue;
    if (value === 'L' && day === lastDayOfMonth(year, month)) return true;
    const weekday = /^(\d{1,2}|L)W$/.exec(value);
    if (weekday) {
      const target = weekday[1] === 'L' ? lastDayOfMonth(year, month) : Number(weekday[1]);
      if (nearestWeekday(year, month, target) === day) return true;
    }
    const offset = /^L-(\d{1,2})$/.exec(value);
    if (offset && lastDayOfMonth(year, month) - Number(offset[1]) === day) return true;
  }
  return false;
}

function matchesDayOfWeek(field: readonly (number | string)[], year: number, month: number, day: number) {
  const weekday = weekdayOf(year, month, day);
  for (const value of field) {
    if (value === weekday) return true;
    if (typeof value !== 'string') continue;
    const nth = /^([0-7])#([1-5])$/.exec(value);
    if (nth) {
      if (Number(nth[1]) % 7 === weekday && Math.floor((day - 1) / 7) + 1 === Number(nth[2])) return true;
      continue;
    }
    const last = /^([0-7])L$/i.exec(value);
    if (last && Number(last[1]) % 7 === weekday && day + 7 > lastDayOfMonth(year, month)) return true;
  }
  return false;
}

/** True when the schedule fires on that calendar day (month 1–12). */
export function firesOnDay(schedule: CronSchedule, year: number, month: number, day: number): boolean {
  return (
    schedule.months.has(month) &&
    matchesDayOfMonth(schedule.daysOfMonth, year, month, day) &&
    matchesDayOfWeek(schedule.daysOfWeek, year, month, day)
  );
}

// --- wall clocks ---------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** Why a time zone is not usable, or undefined when it is (IANA names such as `Europe/Berlin`, `UTC`). */
export function timeZoneProblem(timeZone: unknown): string | undefined {
  if (typeof timeZone !== 'string' || timeZone === '') {
    return 'must be an IANA time zone such as "UTC" or "Europe/Berlin"';
  }
  try {
    formatter(timeZone);
    return undefined;
  } catch {
    return `"${timeZone}" is not a known time zone (use an IANA name such as "UTC" or "Europe/Berlin")`;
  }
}

/**
 * The wall-clock reading of `instant` in the zone, as the epoch milliseconds of that reading taken
 * as UTC ("pseudo-UTC"): `wallClock(t, 'Europe/Berlin') - t` is Berlin's UTC offset at `t`.
 */
export function wallClock(instant: number, timeZone: string): number {
  const parts: Record<string, string> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant))) parts[part.type] = part.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const ms = ((instant % 1000) + 1000) % 1000;
  const utc = new Date(0);
  utc.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
  utc.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), ms);
  return utc.getTime();
}

function offsetAt(instant: number, timeZone: string): number {
  return wallClock(instant, timeZone) - instant;
}

/**
 * The first instant at which the zone's clock reads `wall` (pseudo-UTC) or later: the instant itself
 * when the reading exists, the earlier one when it happens twice, the end of the gap when the clock
 * jumps over it. Non-decreasing in `wall`.
 */
export function instantOfWallClock(wall: number, timeZone: string): number {
  const before = offsetAt(wall - DAY, timeZone);
  const after = offsetAt(wall + DAY, timeZone);
  const candidates = [...new Set([wall - before, wall - after])]
    .filter((instant) => wallClock(instant, timeZone) === wall)
    .sort((a, b) => a - b);
  if (candidates[0] !== undefined) return candidates[0];
  if (after <= before) return wall - before;
  // In the gap: the clock jumped from before `wall` to after it. Find the jump (whole seconds).
  let low = Math.floor((wall - after) / 1000);
  let high = Math.ceil((wall - before) / 1000);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (wallClock(middle * 1000, timeZone) >= wall) high = middle;
    else low = middle;
  }
  return high * 1000;
}

/**
 * The highest reading of the zone's clock up to `now`: the reading at `now`, except in the hours after
 * a fall-back, when the clock reads less than it already did (assumes at most one change a day).
 * Every wall-clock time up to it has been reached by `now`.
 */
function highestReading(now: number, timeZone: string): number {
  const current = wallClock(now, timeZone);
  const offsetNow = current - now;
  if (offsetAt(now - DAY, timeZone) <= offsetNow) return current;
  let low = Math.floor((now - DAY) / 1000);
  let high = Math.floor(now / 1000);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(middle * 1000, timeZone) === offsetNow) high = middle;
    else low = middle;
  }
  return Math.max(current, wallClock(low * 1000 + 999, timeZone));
}

/**
 * The latest instant in `[notBefore, now]` at which the schedule fires in the zone, or undefined.
 * Scans calendar days backwards from `now`; cost grows with `now - notBefore` in days, not with the
 * number of fire times.
 */
export function latestFireAtOrBefore(
  schedule: CronSchedule,
  timeZone: string,
  now: number,
  notBefore: number,
): number | undefined {
  if (notBefore > now) return undefined;
  const upper = highestReading(now, timeZone);
  const lowest = wallClock(notBefore, timeZone) - DAY;
  for (
    let day = upper - (((upper % DAY) + DAY) % DAY);
    day >= lowest - (((lowest % DAY) + DAY) % DAY);
    day -= DAY
  ) {
    const date = new Date(day);
    if (!firesOnDay(schedule, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) continue;
    for (const hour of schedule.hours) {
      const hourStart = day + hour * HOUR;
      if (hourStart > upper) continue;
      for (const minute of schedule.minutes) {
        const minuteStart = hourStart + minute * MINUTE;
        if (minuteStart > upper) continue;
        for (const second of schedule.seconds) {
          const wall = minuteStart + second * 1000;
          if (wall > upper) continue;
          const instant = instantOfWallClock(wall, timeZone);
          if (instant > now) continue;
          return instant >= notBefore ? instant : undefined;
        }
      }
    }
  }
  return undefined;
}

/**
 * The earliest instant in `(after, notAfter]` at which the schedule fires in the zone, or
 * undefined. Scans calendar days forwards from `after`'s; wall-clock times are visited in
 * ascending order and `instantOfWallClock` is non-decreasing, so the first instant past `after` is
 * the earliest. Times more than a few hours before `after`'s reading are skipped without
 * converting them (a clock never goes back further than that in one change).
 */
export function earliestFireAfter(
  schedule: CronSchedule,
  timeZone: string,
  after: number,
  notAfter: number,
): number | undefined {
  if (notAfter <= after) return undefined;
  const lowest = wallClock(after, timeZone) - FALL_BACK_SLACK;
  const highest = wallClock(notAfter, timeZone) + DAY;
  const hours = [...schedule.hours].reverse();
  const minutes = [...schedule.minutes].reverse();
  const seconds = [...schedule.seconds].reverse();
  for (let day = lowest - (((lowest % DAY) + DAY) % DAY); day <= highest; day += DAY) {
    const date = new Date(day);
    if (!firesOnDay(schedule, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) continue;
    for (const hour of hours) {
      const hourStart = day + hour * HOUR;
      if (hourStart + HOUR <= lowest) continue;
      for (const minute of minutes) {
        const minuteStart = hourStart + minute * MINUTE;
        if (minuteStart + MINUTE <= lowest) continue;
        for (const second of seconds) {
          const instant = instantOfWallClock(minuteStart + second * 1000, timeZone);
          if (instant <= after) continue;
          return instant <= notAfter ? instant : undefined;
        }
      }
    }
  }
  return undefined;
}

/** More than any clock change goes back (double summer time once went back 2 h). */
const FALL_BACK_SLACK = 3 * HOUR;
