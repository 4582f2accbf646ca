// The linear assembler's timeline and playlists (packager/linear): right segment for now, item changes, slate, loop,
// cue tags; and as properties over random schedules: monotonic numbers over reloads, identical independent answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandSources, makeProgram, type Program } from '../../../packager/linear/program.js';
import { ANNOUNCE_AHEAD_MS, renderMedia } from '../../../packager/linear/render.js';
import { findAvails } from '../../../ssai/parse/cue-finder.js';
import { Timeline, type Block, type TimelineInput } from '../../../packager/linear/timeline.js';
import { scanMediaPlaylist } from '../../../media/playlist-scanner.js';
import { fakeAsset } from './fake-assets.js';

const A = fakeAsset('A', [4, 4, 2]);
const B = fakeAsset('B', [4, 3]);
const AD = fakeAsset('AD', [4, 2]);
const SLATE = makeProgram(expandSources([{ asset: fakeAsset('S', [1, 1, 1, 1]) }]));
const T = 1_800_000_000_000;
const video = (asset: Parameters<Parameters<typeof renderMedia>[1]>[0]) => asset.variants[0];
const program = (...sources: Parameters<typeof expandSources>[0]) => makeProgram(expandSources(sources));
const block = (start: number, end: number, p: Program, listing = 'l'): Block => ({ start, end, program: p, offset: 0, listing });
const text = (tl: Timeline, now: number, count = 6) => renderMedia(tl.liveWindow(now, count, 40_000, ANNOUNCE_AHEAD_MS), video, 4);
const parse = (s: string) => scanMediaPlaylist(s).playlist!;

describe('linear timeline', () => {
  it('plays the segment of now: the listing loops its content from its start', () => {
    const tl = new Timeline({ blocks: [block(T, T + 60_000, program({ asset: A }))], slate: SLATE });
    const pl = parse(text(tl, T + 25_000));
    const last = pl.segments.at(-1)!;
    // loops of 10 s from T: the third loop's first segment (T+20 s … T+24 s) is the last one ended by T+25 s
    expect(last.uri).toBe('A/v0/0.m4s');
    expect(last.pdtMs).toBe(T + 20_000);
    expect(pl.segments.every((s) => s.uri.startsWith('A/') || s.uri.startsWith('S/'))).toBe(true);
  });

  it('marks each item change with a discontinuity, its map and its date, and fills gaps with slate', () => {
    const tl = new Timeline({ blocks: [block(T, T + 17_000, program({ asset: A }, { asset: B }))], slate: SLATE });
    const pl = parse(renderMedia(tl.window(T + 21_000, 8, 40_000), video, 4));
    expect(pl.segments.map((s) => s.uri)).toEqual(['A/v0/1.m4s', 'A/v0/2.m4s', 'B/v0/0.m4s', 'B/v0/1.m4s', 'S/v0/0.m4s', 'S/v0/1.m4s', 'S/v0/2.m4s', 'S/v0/3.m4s']);
    const b0 = pl.segments.find((s) => s.uri === 'B/v0/0.m4s')!;
    expect(b0.discontinuity).toBe(true);
    expect(b0.map?.uri).toBe('B/v0/init.mp4');
    expect(b0.programDateTime).toBe(new Date(T + 10_000).toISOString());
    const s0 = pl.segments.find((s) => s.uri === 'S/v0/0.m4s')!;
    expect(s0.discontinuity).toBe(true);
    expect(s0.pdtMs).toBe(T + 17_000);
  });

  it('plays slate when nothing is scheduled, and after the last listing without a loop', () => {
    const tl = new Timeline({ blocks: [block(T, T + 10_000, program({ asset: A }))], slate: SLATE });
    expect(parse(text(tl, T - 5_000)).segments.every((s) => s.uri.startsWith('S/'))).toBe(true);
    expect(parse(text(tl, T + 60_000)).segments.every((s) => s.uri.startsWith('S/'))).toBe(true);
  });

  it('replays the last loopInterval after the last listing', () => {
    const blocks = [block(T, T + 10_000, program({ asset: A }), 'a'), block(T + 10_000, T + 17_000, program({ asset: B }), 'b')];
    const tl = new Timeline({ blocks, slate: SLATE, loopMs: 17_000 });
    // E = T+17 s: from E it plays T … T+17 s again, so at E+15 s the last ended segment is B's first (E+10 … E+14 s)
    const segs = tl.window(T + 17_000 + 15_000, 3, 40_000);
    const last = segs.at(-1)!;
    expect(last.block.listing).toBe('b');
    expect(last.startMs).toBe(T + 17_000 + 10_000);
    expect(parse(text(tl, T + 17_000 + 15_000)).segments.at(-1)!.uri).toBe('B/v0/0.m4s');
    expect(parse(text(tl, T + 3 * 17_000 + 4_000)).segments.at(-1)!.uri).toBe('A/v0/0.m4s');
  });

  it('puts CUE-OUT, CUE-OUT-CONT and CUE-IN around an ad position', () => {
    const p = program({ asset: A, ads: [{ start: 4, asset: AD, substitute: 0 }] });
    const tl = new Timeline({ blocks: [block(T, T + 16_000, p)], slate: SLATE });
    const out = text(tl, T + 16_000);
    expect(out).toMatch(/#EXT-X-CUE-OUT:6\.000\n#EXTINF:4\.000000,\nAD\/v0\/0\.m4s\n#EXT-X-CUE-OUT-CONT:ElapsedTime=4\.000,Duration=6\.000\n#EXTINF:2\.000000,\nAD\/v0\/1\.m4s\n#EXT-X-CUE-IN\n#EXT-X-DISCONTINUITY\n/);
    // A's first segment, the 6 s ad, then A resumes where it paused
    expect(parse(out).segments.map((s) => s.uri).filter((u) => !u.startsWith('S/'))).toEqual(['A/v0/0.m4s', 'AD/v0/0.m4s', 'AD/v0/1.m4s', 'A/v0/1.m4s', 'A/v0/2.m4s']);
    const substituted = program({ asset: A, ads: [{ start: 4, asset: AD, substitute: 1 }] });
    // the 6 s ad at 4 s covers A's 4 s and 2 s segments
    expect(substituted.pieces.map((x) => `${x.asset.id}${x.from}-${x.to}`)).toEqual(['A0-1', 'AD0-2']);
  });

  it('announces each break ahead with a future-dated DATERANGE that names it as its CUE-OUT does', () => {
    const p = program({ asset: fakeAsset('LONG', Array.from({ length: 20 }, () => 4)), ads: [{ start: 60, asset: AD, substitute: 0 }] });
    const tl = new Timeline({ blocks: [block(T, T + 600_000, p)], slate: SLATE });
    // The break starts at T+60 s; at T+44 s the window ends at T+44 s: announced, not yet listed.
    const ahead = parse(text(tl, T + 44_000));
    const announced = findAvails(ahead).avails;
    expect(announced).toHaveLength(1);
    expect(announced[0]!.startPdtMs).toBe(T + 60_000);
    expect(announced[0]!.startSegmentIndex).toBeGreaterThan(ahead.segments.at(-1)!.mediaSequence);
    expect(announced[0]).toMatchObject({ duration: 6, durationFromCue: true });
    // Listed: the same break, by the same id, at its CUE-OUT segment.
    const listed = parse(text(tl, T + 70_000));
    const found = findAvails(listed).avails;
    expect(found.map((a) => a.id)).toEqual([announced[0]!.id]);
    expect(listed.segments.find((x) => x.mediaSequence === found[0]!.startSegmentIndex)!.uri).toBe('AD/v0/0.m4s');
    // Not before its lead: at T+20 s the break is 40 s away.
    expect(text(tl, T + 20_000)).not.toContain('EXT-X-DATERANGE');
  });

  it('keeps the CUE-IN on the first segment after a break when the window starts there', () => {
    const p = program({ asset: A, ads: [{ start: 4, asset: AD, substitute: 0 }] });
    const tl = new Timeline({ blocks: [block(T, T + 60_000, p)], slate: SLATE });
    // A 0 … 4 s, AD 4 … 10 s, A resumes at 10 s: a 2-segment window ending at 18 s starts at A's 10 s segment.
    const pl = parse(renderMedia(tl.liveWindow(T + 18_000, 2, 40_000, 0), video, 4));
    expect(pl.segments[0]!.uri).toBe('A/v0/1.m4s');
    expect(pl.segments[0]!.tags.map((t) => t.name)).toContain('EXT-X-CUE-IN');
  });

  it('numbers a channel from its own origin: a channel on slate since the epoch starts near discontinuity 0', () => {
    // counted from 1970, the slate's loops (4 s each) alone would make the discontinuity sequence ~450 million
    const created = T - 86_400_000;
    const tl = new Timeline({ blocks: [block(T, T + 60_000, program({ asset: A }))], slate: SLATE, numberedFromMs: created });
    const pl = parse(text(tl, T + 25_000));
    expect(pl.discontinuitySequence).toBeLessThan(86_400 / 4 + 10);
    expect(pl.mediaSequence).toBeLessThan(86_400 + 20);
    expect(parse(text(new Timeline({ blocks: [block(T, T + 60_000, program({ asset: A }))], slate: SLATE }), T + 25_000)).discontinuitySequence).toBeGreaterThan(1e8);
  });

  describe('properties over random schedules', () => {
    const assets = [A, B, AD, fakeAsset('C', [4, 4, 4, 4, 0.5]), fakeAsset('D', [1.5])];
    const schedule = fc.record({
      items: fc.array(fc.record({
        gap: fc.integer({ min: 0, max: 20_000 }),
        length: fc.integer({ min: 1, max: 60_000 }),
        sources: fc.array(fc.record({ asset: fc.nat(assets.length - 1), ad: fc.option(fc.record({ start: fc.nat(15), asset: fc.nat(assets.length - 1), substitute: fc.constantFrom(0 as const, 1 as const) })) }), { minLength: 0, maxLength: 3 }),
      }), { minLength: 0, maxLength: 6 }),
      loopMs: fc.option(fc.integer({ min: 1_000, max: 90_000 })),
      origin: fc.integer({ min: 0, max: 100_000 }),
    });
    type Schedule = typeof schedule extends fc.Arbitrary<infer R> ? R : never;
    const inputOf = (s: Schedule): TimelineInput => {
      let t = s.origin;
      const blocks: Block[] = [];
      for (const item of s.items) {
        t += item.gap;
        const p = makeProgram(expandSources(item.sources.map((x) => ({ asset: assets[x.asset]!, ...(x.ad ? { ads: [{ start: x.ad.start, asset: assets[x.ad.asset]!, substitute: x.ad.substitute }] } : {}) }))));
        blocks.push(block(t, t + item.length, p.count ? p : SLATE));
        t += item.length;
      }
      return { blocks, slate: SLATE, ...(s.loopMs ? { loopMs: s.loopMs } : {}) };
    };
    const build = (s: Schedule): Timeline => new Timeline(inputOf(s));

    it('numbers every segment once: consecutive sequences, discontinuities counted exactly, over reloads too', () => {
      fc.assert(fc.property(schedule, fc.array(fc.integer({ min: 0, max: 400_000 }), { minLength: 2, maxLength: 6 }), (s, offsets) => {
        const tl = build(s);
        const seen = new Map<number, string>();
        let lastSeq = -1;
        for (const now of [...offsets].sort((a, b) => a - b)) {
          const w = tl.window(now, 8, 40_000);
          for (const [i, seg] of w.entries()) {
            const id = `${seg.startMs}|${seg.durationMs}|${seg.disc}|${seg.program.segmentOf[seg.local]}`;
            const known = seen.get(seg.seq);
            if (known !== undefined) expect(known).toBe(id);
            seen.set(seg.seq, id);
            const prev = w[i - 1];
            if (prev) {
              expect(seg.seq).toBe(prev.seq + 1);
              expect(seg.disc).toBe(prev.disc + (seg.discontinuity ? 1 : 0));
              expect(seg.startMs).toBeGreaterThanOrEqual(prev.startMs + prev.durationMs);
            }
          }
          const end = w.at(-1)?.seq ?? lastSeq;
          expect(end).toBeGreaterThanOrEqual(lastSeq);
          lastSeq = end;
        }
      }), { numRuns: 150 });
    });

    it('lists a number with the same URI and the same cue tags on every reload (issue 26)', () => {
      const cueTags = new Set(['EXT-X-CUE-OUT', 'EXT-X-CUE-OUT-CONT', 'EXT-X-CUE-IN', 'EXT-X-DATERANGE']);
      fc.assert(fc.property(schedule, fc.integer({ min: 0, max: 300_000 }), fc.array(fc.integer({ min: 500, max: 9_000 }), { minLength: 2, maxLength: 30 }), fc.integer({ min: 1, max: 10 }), (s, from, steps, count) => {
        const tl = build(s);
        const seen = new Map<number, string>();
        let now = from;
        for (const step of steps) {
          now += step;
          for (const seg of parse(text(tl, now, count)).segments) {
            const id = `${seg.uri} ${seg.tags.filter((t) => cueTags.has(t.name)).map((t) => `${t.name}:${t.value}`).join(' ')}`;
            const known = seen.get(seg.mediaSequence);
            if (known !== undefined) expect(id, `segment ${seg.mediaSequence} at ${now}`).toBe(known);
            seen.set(seg.mediaSequence, id);
          }
        }
      }), { numRuns: 200 });
    });

    it('walking from the epoch gives the same numbers as the closed forms', () => {
      fc.assert(fc.property(schedule, (s) => {
        const tl = build(s);
        let prev: ReturnType<Timeline['window']>[number] | undefined;
        let n = 0;
        for (const seg of tl.segmentsFrom(0)) {
          if (prev) {
            expect(seg.seq).toBe(prev.seq + 1);
            expect(seg.disc).toBe(prev.disc + (seg.discontinuity ? 1 : 0));
          } else {
            expect(seg.seq).toBe(0);
            expect(seg.disc).toBe(1);
          }
          prev = seg;
          if (++n > 3000 || seg.startMs > 500_000) break;
        }
      }), { numRuns: 100 });
    });

    it('counted from numberedFromMs: the same numbers less those of the first segment there, so they start at 0', () => {
      fc.assert(fc.property(schedule, fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 100_000 }), (s, anchor, after) => {
        const epoch = build(s);
        const rebased = new Timeline({ ...inputOf(s), numberedFromMs: anchor });
        const first = epoch.segmentsFrom(anchor).next().value!;
        expect(rebased.segmentsFrom(anchor).next().value).toMatchObject({ seq: 0, disc: 0, startMs: first.startMs });
        const now = anchor + after;
        const a = epoch.window(now, 8, 40_000);
        const b = rebased.window(now, 8, 40_000);
        expect(b.map((x) => [x.seq + first.seq, x.disc + first.disc, x.startMs])).toEqual(a.map((x) => [x.seq, x.disc, x.startMs]));
      }), { numRuns: 150 });
    });

    it('two independent computations give the same playlist', () => {
      fc.assert(fc.property(schedule, fc.integer({ min: 0, max: 400_000 }), (s, now) => {
        expect(text(build(s), now)).toBe(text(build(structuredClone(s)), now));
      }), { numRuns: 100 });
    });
  });
});
