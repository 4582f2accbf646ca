import { describe, expect, it } from 'vitest';
import { AdServerPacer } from '../../../ssai/decide/ad-server-pacer.js';

/** Sends as fast as the pacer lets, on a clock stepping `stepMs`; returns the send times. */
function sendAll(pacer: AdServerPacer, untilMs: number, stepMs: number): number[] {
  const sent: number[] = [];
  for (let t = 0; t < untilMs; t += stepMs) {
    while (pacer.waitMs(t) === 0) { pacer.take(t); sent.push(t); }
  }
  return sent;
}

/** The most sends in any window of 1 s. */
function peakOfAnySecond(times: number[]): number {
  let peak = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}

describe('ad server pacer', () => {
  it('never sends more than the cap in any second, at any clock step, and keeps up with the cap', () => {
    for (const [cap, step] of [[200, 1], [200, 0.3], [200, 37], [5000, 1], [7, 1], [1, 5]] as const) {
      const sent = sendAll(new AdServerPacer(cap, 0), 10_000, step);
      expect(peakOfAnySecond(sent), `cap ${cap} step ${step}`).toBeLessThanOrEqual(cap);
      expect(sent.length, `cap ${cap} step ${step}`).toBeGreaterThanOrEqual(cap * 8.5); // (counted over 1.1 s)
    }
  });

  it('spreads sends within the second: a burst holds a tenth of the cap at most', () => {
    const sent = sendAll(new AdServerPacer(1000, 0), 3000, 1);
    let peak100 = 0;
    for (let i = 0, j = 0; i < sent.length; i++) { while (sent[i]! - sent[j]! >= 100) j++; peak100 = Math.max(peak100, i - j + 1); }
    expect(peak100).toBeLessThanOrEqual(200); // the bucket's tenth, and a tenth more refilled over the 100 ms
  });

  it('refuses a cap that is not a positive whole number', () => {
    expect(() => new AdServerPacer(0, 0)).toThrow(RangeError);
    expect(() => new AdServerPacer(1.5, 0)).toThrow(RangeError);
  });
});
