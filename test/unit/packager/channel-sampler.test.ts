// Issue 26 §5: NETWORK_OUT of a steady channel is a steady line. 6 s segments sampled every 5 s used to give one sample
// in six no closed segment at all (0 Mb/s every 30 s).
import { describe, expect, it } from 'vitest';
import type { ChannelMetric } from '../../../kernel/seams/channel-runtime.js';
import { ChannelSampler } from '../../../packager/graphs/channel-sampler.js';

const sources = { encoderPid: () => undefined, frontBytesIn: () => 0, packetsLost: () => 0, activeAlarms: () => 0, slateOnAir: () => false };

/** Runs a clock in 100 ms steps: renditions close segments of `segmentSeconds` at their bitrates, sampled every `sampleMs`. */
function run(options: { segmentSeconds: number; sampleMs: (i: number) => number; renditions: Array<{ id: string; mbps: number }>; seconds: number; stopAt?: number }): Array<{ at: number; mbps: number }> {
  let now = 1_000_000;
  const out: Array<{ at: number; mbps: number }> = [];
  const sampler = new ChannelSampler(sources, (metric: ChannelMetric, value: number) => {
    if (metric === 'NETWORK_OUT') out.push({ at: now, mbps: value });
  }, 5000, () => now);
  const start = now;
  let nextSegment = start + options.segmentSeconds * 1000;
  let samples = 0;
  let nextSample = start + options.sampleMs(0);
  while (now < start + options.seconds * 1000) {
    now += 100;
    if (now >= nextSegment) {
      if (options.stopAt === undefined || now < start + options.stopAt * 1000) {
        for (const r of options.renditions) sampler.segment(r.id, (r.mbps * 1e6 * options.segmentSeconds) / 8, options.segmentSeconds);
      }
      nextSegment += options.segmentSeconds * 1000;
    }
    if (now >= nextSample) {
      sampler.sample();
      samples += 1;
      nextSample += options.sampleMs(samples);
    }
  }
  return out;
}

describe('NETWORK_OUT of a channel', () => {
  const renditions = [{ id: 'r720', mbps: 3 }, { id: 'r360', mbps: 1 }];

  it('is a steady line for steady 6 s segments sampled every 5 s', () => {
    const samples = run({ segmentSeconds: 6, sampleMs: () => 5000, renditions, seconds: 300 });
    // from the first closed segment on
    const steady = samples.filter((s) => s.at >= 1_000_000 + 10_000);
    expect(steady.length).toBeGreaterThan(50);
    for (const s of steady) expect(s.mbps, `at ${(s.at - 1_000_000) / 1000} s`).toBeCloseTo(4, 2);
  });

  it('stays within a few percent when segments are 6.006 s and the samples jitter', () => {
    const jitter = [5000, 4900, 5200, 5000, 4800, 5100];
    const samples = run({ segmentSeconds: 6.006, sampleMs: (i) => jitter[i % jitter.length]!, renditions, seconds: 300 });
    const steady = samples.filter((s) => s.at >= 1_000_000 + 10_000);
    for (const s of steady) {
      expect(s.mbps, `at ${(s.at - 1_000_000) / 1000} s`).toBeGreaterThan(4 * 0.95);
      expect(s.mbps, `at ${(s.at - 1_000_000) / 1000} s`).toBeLessThan(4 * 1.05);
    }
  });

  it('falls to 0 once the segments stop', () => {
    const samples = run({ segmentSeconds: 6, sampleMs: () => 5000, renditions, seconds: 120, stopAt: 60 });
    expect(samples.find((s) => s.at < 1_000_000 + 55_000 && s.at > 1_000_000 + 10_000)?.mbps).toBeCloseTo(4, 2);
    // two segment lengths after the last one, nothing is counted any more
    for (const s of samples.filter((x) => x.at > 1_000_000 + 60_000 + 12_000 + 5000)) expect(s.mbps).toBe(0);
  });

  it('counts bytes sent to a push destination in the interval they were sent', () => {
    let now = 0;
    const values: number[] = [];
    const sampler = new ChannelSampler(sources, (metric, value) => { if (metric === 'NETWORK_OUT') values.push(value); }, 5000, () => now);
    now = 5000;
    sampler.output(5_000_000 / 8 * 5);
    sampler.sample();
    now = 10_000;
    sampler.sample();
    expect(values).toEqual([5, 0]);
  });
});
