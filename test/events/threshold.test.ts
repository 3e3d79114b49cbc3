import { describe, expect, it } from 'vitest';
import { stepThreshold, type ThresholdState } from '../../src/events/detectors/threshold.js';

function run(sequence: string, failureThreshold: number, successThreshold: number) {
  let state: ThresholdState | null = null;
  const transitions: string[] = [];
  [...sequence].forEach((symbol, index) => {
    const step = stepThreshold(state, symbol === '+', index * 1000, { failureThreshold, successThreshold });
    state = step.state;
    if (step.transition?.kind === 'fired')
      transitions.push(`fired@${index} since ${step.transition.since / 1000}`);
    if (step.transition?.kind === 'resolved') {
      transitions.push(`resolved@${index} after ${step.transition.durationMs / 1000}s`);
    }
  });
  return transitions;
}

describe('consecutive-threshold state machine', () => {
  it.each([
    ['+---', 3, 1, ['fired@3 since 1']],
    ['+--+--+', 3, 1, []],
    ['+---+', 3, 1, ['fired@3 since 1', 'resolved@4 after 3s']],
    ['+---+-++', 3, 2, ['fired@3 since 1', 'resolved@7 after 5s']],
    ['+---++-++', 3, 3, ['fired@3 since 1']],
    ['--', 2, 1, ['fired@1 since 0']],
    ['-+--', 2, 1, ['fired@3 since 2']],
    [
      '+-+-+-',
      1,
      1,
      ['fired@1 since 1', 'resolved@2 after 1s', 'fired@3 since 3', 'resolved@4 after 1s', 'fired@5 since 5'],
    ],
    ['++++', 1, 1, []],
  ])('%s with failure %i / success %i', (sequence, failure, success, expected) => {
    expect(run(sequence, failure, success)).toEqual(expected);
  });

  it('reports whether a healthy baseline was seen before firing', () => {
    const cold = stepThreshold(null, false, 0, { failureThreshold: 1, successThreshold: 1 });
    expect(cold.transition).toMatchObject({ kind: 'fired', previousKnown: false });
    const warm = stepThreshold(
      stepThreshold(null, true, 0, { failureThreshold: 1, successThreshold: 1 }).state,
      false,
      1,
      { failureThreshold: 1, successThreshold: 1 },
    );
    expect(warm.transition).toMatchObject({ kind: 'fired', previousKnown: true });
  });

  it('treats thresholds below one as one', () => {
    expect(
      stepThreshold(null, false, 0, { failureThreshold: 0, successThreshold: -3 }).transition?.kind,
    ).toBe('fired');
  });
});
