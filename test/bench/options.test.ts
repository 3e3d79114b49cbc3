import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SIZES,
  entityPollerList,
  modeList,
  replicaCount,
  SIZES,
  sizeList,
  wholeNumber,
} from '../../bench/options.js';

describe('benchmark options', () => {
  it('reads sizes by name, each once, in the order given', () => {
    expect(sizeList('40k, 1k,40k').map((spec) => spec.label)).toEqual(['40k', '1k']);
  });

  it('has a 100k size of 50,000 vehicles and 50,000 robots on one 60 s cycle, not run by default', () => {
    expect(sizeList('100k')).toEqual([
      { label: '100k', vehicles: 50_000, robots: 50_000, intervalMs: 60_000, cycles: 2 },
    ]);
    expect(DEFAULT_SIZES).toEqual(['1k', '10k', '40k']);
    expect(DEFAULT_SIZES.every((name) => SIZES[name])).toBe(true);
  });

  it('names the sizes it knows when given another', () => {
    expect(() => sizeList('1k,2k')).toThrow(InvalidArgumentError);
    expect(() => sizeList('1k,2k')).toThrow('unknown size "2k"; choose from 1k, 10k, 40k, 100k');
    expect(() => sizeList('')).toThrow('unknown size ""');
  });

  it('runs the modes quiet first, whatever order they are given in', () => {
    expect(modeList('contended,quiet')).toEqual(['quiet', 'contended']);
    expect(modeList('contended')).toEqual(['contended']);
    expect(modeList('quiet, quiet')).toEqual(['quiet']);
  });

  it('names the modes it knows when given another', () => {
    expect(() => modeList('quiet,busy')).toThrow('unknown mode "busy"; choose from quiet, contended');
    expect(() => modeList('quiet,')).toThrow('unknown mode ""');
  });

  it('takes 1 to 4 replicas and names what it expected otherwise', () => {
    expect(replicaCount('2')).toBe(2);
    for (const wrong of ['0', '5', '1.5', 'two']) {
      expect(() => replicaCount(wrong)).toThrow(InvalidArgumentError);
    }
    expect(() => replicaCount('5')).toThrow('expected a whole number from 1 to 4; got "5"');
  });

  it('reads whole numbers inside their bounds only', () => {
    const rounds = wholeNumber(1, 20);
    expect(rounds('20')).toBe(20);
    for (const wrong of ['', ' ', '0', '21', '2.5', 'three'])
      expect(() => rounds(wrong)).toThrow(InvalidArgumentError);
    expect(() => rounds('21')).toThrow('expected a whole number from 1 to 20; got "21"');
  });

  it('takes per-entity pollers for the poll path, and names them when given a list poller', () => {
    expect(entityPollerList('robot_health, power,robot_health')).toEqual(['robot_health', 'power']);
    expect(() => entityPollerList('robots')).toThrow(InvalidArgumentError);
    expect(() => entityPollerList('robots')).toThrow(
      'unknown per-entity poller "robots"; choose from power, robot_health, robot_feedback, robot_lease, robot_config, robot_command_queue',
    );
  });
});
