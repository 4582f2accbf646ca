import { describe, expect, it } from 'vitest';
import { chooseLadder, even } from '../../../vod-encoder/ladder.js';

describe('chooseLadder', () => {
  it('gives a 1080p source all four rungs with their bitrates', () => {
    const l = chooseLadder({ width: 1920, height: 1080, frameRate: 30 });
    expect(l.rungs.map((r) => [r.width, r.height, r.videoBitrate])).toEqual([
      [1920, 1080, 5_000_000], [1280, 720, 3_000_000], [854, 480, 1_400_000], [640, 360, 800_000],
    ]);
    expect(l.audioBitrate).toBe(128_000);
    expect(l.segmentDurationSec).toBe(4);
  });

  it('never upscales a 720p source', () => {
    const l = chooseLadder({ width: 1280, height: 720, frameRate: 25 });
    expect(l.rungs.map((r) => r.height)).toEqual([720, 480, 360]);
    expect(l.frameRate).toBe(25);
  });

  it('gives a source below 360p one rung at its own even height', () => {
    const l = chooseLadder({ width: 321, height: 181, frameRate: 30 });
    expect(l.rungs).toHaveLength(1);
    expect(l.rungs[0]).toMatchObject({ width: 322, height: 182 });
    expect(l.rungs[0]!.videoBitrate).toBeGreaterThanOrEqual(200_000);
  });

  it('keeps the aspect of a portrait source with even dimensions', () => {
    const l = chooseLadder({ width: 1080, height: 1920, frameRate: 30 });
    expect(l.rungs[0]).toMatchObject({ width: 608, height: 1080 });
    for (const r of l.rungs) {
      expect(r.width % 2).toBe(0);
      expect(r.height % 2).toBe(0);
      expect(Math.abs(r.width / r.height - 1080 / 1920)).toBeLessThan(0.01);
    }
  });

  it('caps frame rates above 60 and defaults an unknown rate to 30', () => {
    expect(chooseLadder({ width: 640, height: 360, frameRate: 120 }).frameRate).toBe(60);
    expect(chooseLadder({ width: 640, height: 360, frameRate: 0 }).frameRate).toBe(30);
  });

  it('rounds to the nearest even number', () => {
    expect([even(853.3), even(1), even(359)]).toEqual([854, 2, 360]);
  });
});
