// Live MPDs addressed by the clock (ssai/parse/mpd-reader.ts): SegmentTemplate@duration with $Number$ and a
// SegmentTimeline whose last S repeats with r="-1", read at a wall-clock time as DASH-IF IOP 4.3 §4.3.2.2 says: the
// window holds the segments whose end has passed, within the time shift buffer, numbered from startNumber.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readMpd, type MpdRead } from '../../../ssai/parse/mpd-reader.js';

const AST = Date.parse('2026-01-01T00:00:00Z');

type Form = { timescale: number; duration: number; startNumber: number; pto: number; periodStart: number; timeShift?: number };

function mpdOf(f: Form, addressing: 'duration' | 'repeat', mup = 'PT500S'): string {
  const tsbd = f.timeShift !== undefined ? ` timeShiftBufferDepth="PT${f.timeShift}S"` : '';
  const template = addressing === 'duration'
    ? `<SegmentTemplate timescale="${f.timescale}" duration="${f.duration}" presentationTimeOffset="${f.pto}" startNumber="${f.startNumber}" media="s-$Number%05d$.m4s" initialization="i.m4s"/>`
    : `<SegmentTemplate timescale="${f.timescale}" presentationTimeOffset="${f.pto}" startNumber="${f.startNumber}" media="s-$Number%05d$.m4s" initialization="i.m4s"><SegmentTimeline><S t="${f.pto}" d="${f.duration}" r="-1"/></SegmentTimeline></SegmentTemplate>`;
  return `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z" minimumUpdatePeriod="${mup}"${tsbd}>
<Period id="0" start="PT${f.periodStart}S"><AdaptationSet contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="1">${template}</Representation></AdaptationSet></Period></MPD>`;
}

const read = (text: string, nowMs: number): MpdRead => {
  const r = readMpd(text, { nowMs });
  if (!r.ok) throw new Error(r.message);
  return r.value;
};

const form = fc.record({
  timescale: fc.constantFrom(1, 90_000, 1_000_000, 48_000),
  seconds: fc.integer({ min: 1, max: 10 }),
  startNumber: fc.integer({ min: 0, max: 5000 }),
  ptoSec: fc.integer({ min: 0, max: 100_000 }),
  periodStart: fc.integer({ min: 0, max: 3600 }),
  timeShift: fc.option(fc.integer({ min: 4, max: 120 }), { nil: undefined }),
}).map(({ seconds, ptoSec, ...f }): Form => ({ ...f, duration: seconds * f.timescale, pto: ptoSec * f.timescale, ...(f.timeShift === undefined ? { timeShift: undefined } : {}) }));

describe('a live MPD addressed by the clock', () => {
  it('lists the segments out by now, within the time shift buffer, numbered from startNumber ($Number$ and r="-1" alike)', () => {
    fc.assert(fc.property(form, fc.integer({ min: 0, max: 900_000 }), (f, sinceStartMs) => {
      const nowMs = AST + f.periodStart * 1000 + sinceStartMs;
      const elapsed = sinceStartMs / 1000;
      const seg = f.duration / f.timescale;
      const byDuration = read(mpdOf(f, 'duration'), nowMs);
      const a = byDuration.representations[0]!.addressing!;
      // written as a SegmentTimeline (the stitcher cuts content Periods anywhere in the window)
      expect(a.timeline).toBe(true);
      a.segments.forEach((s, i) => {
        const k = s.n - f.startNumber;
        expect(s.t).toBe(f.pto + k * f.duration);
        expect(s.d).toBe(f.duration);
        if (i > 0) expect(s.n).toBe(a.segments[i - 1]!.n + 1);
        // out by now: its end has passed on the Period's clock
        expect((k + 1) * seg).toBeLessThanOrEqual(elapsed + 1e-6);
        // within the time shift buffer: its end is not older than it (the newest one out is listed whatever the buffer)
        if (f.timeShift !== undefined && i < a.segments.length - 1) expect((k + 1) * seg).toBeGreaterThan(elapsed - f.timeShift - 1e-6);
      });
      // the newest segment out is listed: the next ends in the future
      const last = a.segments.at(-1);
      expect(last === undefined).toBe(elapsed < seg);
      const nextEnd = last ? (last.n - f.startNumber + 2) * seg : seg;
      expect(nextEnd).toBeGreaterThan(elapsed - 1e-6);
      expect(byDuration.clockUntilMs).toBeCloseTo(AST + (f.periodStart + nextEnd) * 1000, 3);
      // the live edge, the window's end
      expect(byDuration.periods[0]!.durationSec).toBeCloseTo(last ? (last.n - f.startNumber + 1) * seg : 0, 6);
      // the same window from a SegmentTimeline that repeats on with r="-1"
      const byRepeat = read(mpdOf(f, 'repeat'), nowMs);
      expect(byRepeat.representations[0]!.addressing!.segments).toEqual(a.segments);
      expect(byRepeat.clockUntilMs).toBeCloseTo(byDuration.clockUntilMs!, 3);
    }), { numRuns: 150 });
  });

  it('asks for reloads at least once a segment (the viewer\'s MPD lists the window as a SegmentTimeline)', () => {
    const f: Form = { timescale: 1_000_000, duration: 2_000_000, startNumber: 1, pto: 0, periodStart: 0, timeShift: 12 };
    expect(read(mpdOf(f, 'duration'), AST + 30_000).mpd.getAttribute('minimumUpdatePeriod')).toBe('PT2S');
    expect(read(mpdOf(f, 'duration', 'PT1S'), AST + 30_000).mpd.getAttribute('minimumUpdatePeriod')).toBe('PT1S');
    // 30 s into the stream, 12 s of time shift: segments 10 to 15 ([18, 20) to [28, 30))
    expect(read(mpdOf(f, 'duration'), AST + 30_000).representations[0]!.addressing!.segments.map((s) => s.n)).toEqual([10, 11, 12, 13, 14, 15]);
  });

  it('keeps a SegmentTimeline of explicit S elements as listed, and refuses the clock forms without availabilityStartTime', () => {
    const f: Form = { timescale: 1000, duration: 2000, startNumber: 1, pto: 0, periodStart: 0 };
    const explicit = readMpd(mpdOf(f, 'repeat').replace('r="-1"', 'r="3"'), { nowMs: AST + 60_000 });
    expect(explicit.ok && explicit.value.representations[0]!.addressing!.segments.length).toBe(4);
    expect(explicit.ok && explicit.value.clockUntilMs).toBeUndefined();
    for (const addressing of ['duration', 'repeat'] as const) {
      const r = readMpd(mpdOf(f, addressing).replace(/ availabilityStartTime="[^"]*"/, ''), { nowMs: AST + 60_000 });
      expect(r.ok).toBe(false);
      expect(!r.ok && r.unsupported && r.message).toMatch(/availabilityStartTime/);
    }
  });
});
