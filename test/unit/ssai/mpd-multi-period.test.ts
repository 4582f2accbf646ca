// Multi-Period origin MPDs (issue 33): the stitcher cuts the origin Periods a break falls in and passes the others
// whole, each content Period keeping its media time (presentationTimeOffset), numbers and URLs under its own BaseURL;
// ad Periods mirror the origin Period they interrupt. A property sweep over generated static MPDs (1–4 Periods, each
// with its own timescale, startNumber, presentationTimeOffset, segment length, addressing, BaseURL and track set) and
// breaks on any segment boundary, at Period boundaries and spanning them; and a 2-Period live MPD refreshed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkMpd } from '../../../ssai/check/mpd-checker.js';
import { readMpd, timelineStarts, type MpdRead } from '../../../ssai/parse/mpd-reader.js';
import { mpdCues } from '../../../ssai/parse/mpd-cues.js';
import { liveTimeline, stitchMpd, type DashAd, type DashBreak } from '../../../ssai/stitch/mpd-stitcher.js';
import { readTestMpd, type TestPeriod } from '../../helpers/dash-mpd.js';

const MPD_URL = 'https://origin.example/show/manifest.mpd';
const VIEWER_URL = 'https://engine.example/v1/dash/g/show/manifest.mpd';

/** A generated origin Period: `segments` of `segSec` each, aligned on its presentationTimeOffset. */
type GenPeriod = {
  segments: number; segSec: number; timescale: number; startNumber: number; ptoSec: number;
  timeline: boolean; baseUrl: boolean; audio: boolean; rungs: number; writeStart: boolean; writeDuration: boolean;
};

const genPeriod: fc.Arbitrary<GenPeriod> = fc.record({
  segments: fc.integer({ min: 1, max: 6 }),
  segSec: fc.constantFrom(1, 2, 4),
  timescale: fc.constantFrom(1000, 15_360, 90_000, 48_000),
  startNumber: fc.integer({ min: 0, max: 2000 }),
  ptoSec: fc.integer({ min: 0, max: 36_000 }),
  timeline: fc.boolean(),
  baseUrl: fc.boolean(),
  audio: fc.boolean(),
  rungs: fc.integer({ min: 1, max: 2 }),
  writeStart: fc.boolean(),
  writeDuration: fc.boolean(),
});

const startsOf = (periods: readonly GenPeriod[]): number[] => {
  const out: number[] = [];
  let at = 0;
  for (const p of periods) { out.push(at); at += p.segments * p.segSec; }
  return out;
};
const totalOf = (periods: readonly GenPeriod[]): number => periods.reduce((t, p) => t + p.segments * p.segSec, 0);

/** The origin's text. A Period's length is said by its own @duration, the next @start or mediaPresentationDuration. */
function originMpd(periods: readonly GenPeriod[]): string {
  const starts = startsOf(periods);
  const body = periods.map((p, i) => {
    const pto = p.ptoSec * p.timescale;
    const d = p.segSec * p.timescale;
    const template = (rep: string, ts: number, dd: number, ptoTicks: number): string => p.timeline
      ? `<SegmentTemplate timescale="${ts}" presentationTimeOffset="${ptoTicks}" startNumber="${p.startNumber}" media="${rep}_$Number$.m4s" initialization="${rep}_init.mp4"><SegmentTimeline><S t="${ptoTicks}" d="${dd}" r="${p.segments - 1}"/></SegmentTimeline></SegmentTemplate>`
      : `<SegmentTemplate timescale="${ts}" presentationTimeOffset="${ptoTicks}" startNumber="${p.startNumber}" duration="${dd}" media="${rep}_$Number$.m4s" initialization="${rep}_init.mp4"/>`;
    const video = Array.from({ length: p.rungs }, (_, r) => `<Representation id="v${r}" bandwidth="${(r + 1) * 100_000}" width="${640 / (r + 1)}" height="${360 / (r + 1)}" codecs="avc1.64001f">${template(`p${i}v${r}`, p.timescale, d, pto)}</Representation>`).join('');
    const audio = p.audio ? `<AdaptationSet id="${10 + i}" contentType="audio" mimeType="audio/mp4" lang="en"><Representation id="a" bandwidth="64000" codecs="mp4a.40.2" audioSamplingRate="48000">${template(`p${i}a`, 48_000, p.segSec * 48_000, p.ptoSec * 48_000)}</Representation></AdaptationSet>` : '';
    const last = i === periods.length - 1;
    const needsDuration = !last && !periods[i + 1]!.writeStart;
    const attrs = `id="origin-${i}"${i === 0 || p.writeStart ? ` start="PT${starts[i]}S"` : ''}${p.writeDuration || needsDuration ? ` duration="PT${p.segments * p.segSec}S"` : ''}`;
    return `<Period ${attrs}>${p.baseUrl ? `<BaseURL>part${i}/</BaseURL>` : ''}<AdaptationSet id="${i}" contentType="video" mimeType="video/mp4">${video}</AdaptationSet>${audio}</Period>`;
  }).join('\n');
  return `<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT${totalOf(periods)}S">\n${body}\n</MPD>`;
}

const readOk = (text: string, nowMs?: number): MpdRead => {
  const r = readMpd(text, nowMs !== undefined ? { nowMs } : {});
  if (!r.ok) throw new Error(r.message);
  return r.value;
};

/** An ad whose renditions are 2 s segments (the last shorter) for every Representation it mirrors. */
const ad = (periodId: string, seconds: number): DashAd => ({
  periodId, duration: seconds,
  rendition: (rep) => {
    const durations: number[] = [];
    for (let left = seconds; left > 1e-9; left -= 2) durations.push(Math.min(2, left));
    return { init: `https://cdn.example/ad/${rep.id}/init.mp4`, mediaPrefix: `/v1/segment/g/s/${periodId}/${rep.id}/`, mediaSuffix: '.m4s',
      durations, bandwidth: 100, width: rep.width ?? 0, height: rep.height ?? 0, timescale: rep.kind === 'audio' ? 48_000 : 90_000 };
  },
});

/** A generated break: at boundary `at` of the content's segment boundaries, replacing `span` segments (0: an insertion). */
type GenBreak = { at: number; span: number; ads: number[] };
const genBreak: fc.Arbitrary<GenBreak> = fc.record({ at: fc.nat(), span: fc.integer({ min: 0, max: 5 }), ads: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 2 }) });

/** The breaks on the reference video's boundaries (as dash-playback.ts's vodPlace): their start and where they resume. */
function placeBreaks(read: MpdRead, gen: readonly GenBreak[]): DashBreak[] {
  const starts = timelineStarts(read);
  const last = starts[starts.length - 1]!;
  const bounds = [...starts.map((s) => s.start), last.start + last.duration];
  return gen.map((g, k) => {
    const i = g.at % bounds.length;
    const j = Math.min(bounds.length - 1, i + g.span);
    return { id: `b${k}`, atSeconds: bounds[i]!, resumeSeconds: bounds[j]!, ads: g.ads.map((d, a) => ad(`b${k}-${a}`, d)) };
  });
}

/** What the stitcher should keep, independently: the content outside every break's replaced part, cut at Period bounds. */
function expectedContent(periods: readonly GenPeriod[], breaks: readonly DashBreak[]): Array<{ period: number; from: number; to: number }> {
  const starts = startsOf(periods);
  const end = totalOf(periods);
  const cuts: Array<[number, number]> = [];
  let cursor = 0;
  for (const b of [...breaks].sort((x, y) => x.atSeconds - y.atSeconds)) {
    if (b.atSeconds < cursor) continue;
    cuts.push([b.atSeconds, Math.max(b.atSeconds, b.resumeSeconds)]);
    cursor = Math.max(b.atSeconds, b.resumeSeconds);
  }
  const kept: Array<{ period: number; from: number; to: number }> = [];
  periods.forEach((p, i) => {
    let from = starts[i]!;
    const to = from + p.segments * p.segSec;
    // the Period's part outside the cuts, split where a break starts (insertions too)
    const points = cuts.flatMap(([a, r]) => [a, r]).filter((x) => x > from && x < to);
    const edges = [from, ...points, to];
    for (let k = 0; k < edges.length - 1; k++) {
      const a = edges[k]!;
      const b = edges[k + 1]!;
      if (b > a && !cuts.some(([x, r]) => a >= x && b <= r && r > x)) kept.push({ period: i, from: a, to: b });
    }
    from = to;
  });
  // neighbouring parts of one Period not split by any break's start are one content Period
  return kept.reduce<typeof kept>((out, k) => {
    const prev = out[out.length - 1];
    if (prev && prev.period === k.period && prev.to === k.from && !cuts.some(([x]) => x === k.from)) prev.to = k.to;
    else out.push({ ...k });
    return out;
  }, []);
}

const isAd = (p: TestPeriod): boolean => /^b\d+-\d+$/.test(p.id);

describe('a multi-Period origin MPD', () => {
  it('is read Period by Period on the MPD\'s timeline: starts inferred, each its own timescale, numbers and offset', () => {
    const periods: GenPeriod[] = [
      { segments: 4, segSec: 2, timescale: 15_360, startNumber: 1, ptoSec: 0, timeline: true, baseUrl: false, audio: true, rungs: 2, writeStart: true, writeDuration: false },
      { segments: 4, segSec: 2, timescale: 90_000, startNumber: 100, ptoSec: 3600, timeline: false, baseUrl: true, audio: false, rungs: 1, writeStart: false, writeDuration: true },
    ];
    const read = readOk(originMpd(periods));
    expect(read.periods.map((p) => [p.id, p.startSec, p.durationSec, p.representations.length])).toEqual([['origin-0', 0, 8, 3], ['origin-1', 8, 8, 1]]);
    expect(read.durationSec).toBe(16);
    expect(timelineStarts(read).map((s) => s.start)).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
    expect(read.representations.map((r) => r.periodIndex)).toEqual([0, 0, 0, 1]);
  });

  it('reads a cue in any Period at its Period\'s start plus its time there', () => {
    const text = originMpd([
      { segments: 4, segSec: 2, timescale: 1000, startNumber: 1, ptoSec: 0, timeline: true, baseUrl: false, audio: false, rungs: 1, writeStart: true, writeDuration: false },
      { segments: 4, segSec: 2, timescale: 1000, startNumber: 1, ptoSec: 50, timeline: true, baseUrl: false, audio: false, rungs: 1, writeStart: true, writeDuration: false },
    ]).replace(/(<Period id="origin-1"[^>]*>)/, '$1<EventStream schemeIdUri="urn:scte:scte35:2013:xml" timescale="10" presentationTimeOffset="500">'
      + '<Event presentationTime="520" duration="40" id="7"><SpliceInfoSection xmlns="http://www.scte.org/schemas/35/2016"><SpliceInsert spliceEventId="5" outOfNetworkIndicator="true"/></SpliceInfoSection></Event></EventStream>');
    expect(mpdCues(readOk(text)).cues.map((c) => [c.id, c.atSec, c.durationSec])).toEqual([['scte-5', 10, 4]]);
  });

  it('cuts only the Period a break falls in, and resumes a break that spans a Period boundary in the next Period at its end', () => {
    const periods: GenPeriod[] = [0, 1, 2].map((i) => ({ segments: 4, segSec: 2, timescale: 1000 * (i + 1), startNumber: 10 * i, ptoSec: 100 * i, timeline: i !== 1, baseUrl: i === 2, audio: true, rungs: 1, writeStart: true, writeDuration: false }));
    const read = readOk(originMpd(periods));
    const breaks: DashBreak[] = [
      // at the boundary of origin-0 and origin-1, an insertion: the ads mirror the Period it starts
      { id: 'at', atSeconds: 8, resumeSeconds: 8, ads: [ad('at-0', 4)] },
      // from 12 s of origin-1 to 18 s, 2 s into origin-2: origin-1 ends at the break, origin-2 resumes at its end
      { id: 'span', atSeconds: 12, resumeSeconds: 18, ads: [ad('span-0', 6)] },
    ];
    const text = stitchMpd(read, { mpdUrl: MPD_URL, breaks, emptyTextUri: '/e.vtt' });
    const mpd = readTestMpd(text, VIEWER_URL);
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      ['content-0', 0, 8], ['at-0', 8, 4], ['content-1', 12, 4], ['span-0', 16, 6], ['content-2', 22, 6],
    ]);
    expect(mpd.periods[1]!.sets.map((s) => s.id)).toEqual(['1', '11']);
    // origin-0 passes whole: its numbers and offset as the origin's
    const whole = mpd.periods[0]!.sets[0]!.representations[0]!;
    expect([whole.timescale, whole.presentationTimeOffset, whole.startNumber, whole.segments.length]).toEqual([1000, 0, 0, 4]);
    // origin-2 from its second segment: its own BaseURL, timescale, number and media time (200 s + 2 s)
    const resumed = mpd.periods[4]!.sets[0]!.representations[0]!;
    expect(mpd.periods[4]!.baseUrl).toBe('https://origin.example/show/part2/');
    expect([resumed.timescale, resumed.presentationTimeOffset, resumed.startNumber]).toEqual([3000, 202 * 3000, 21]);
    expect(resumed.segments.map((s) => s.url)).toEqual([21, 22, 23].map((n) => `https://origin.example/show/part2/p2v0_${n}.m4s`));
    expect(checkMpd(text).filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('stitches any Periods and breaks into an MPD the checks pass, the content kept exactly, every ad mirroring its Period', () => {
    fc.assert(fc.property(fc.array(genPeriod, { minLength: 1, maxLength: 4 }), fc.array(genBreak, { maxLength: 4 }), (periods, gen) => {
      const origin = originMpd(periods);
      const read = readOk(origin);
      const breaks = placeBreaks(read, gen);
      const text = stitchMpd(read, { mpdUrl: MPD_URL, breaks, emptyTextUri: '/e.vtt' });
      expect(checkMpd(text).filter((f) => f.severity === 'error')).toEqual([]);
      const mpd = readTestMpd(text, VIEWER_URL);
      const starts = startsOf(periods);

      // the content: each content Period is one part of one origin Period, its media time and segments the origin's
      const content = mpd.periods.filter((p) => !isAd(p)).map((p) => {
        const set = p.sets.find((s) => s.contentType === 'video')!;
        const i = Number(set.id);
        const g = periods[i]!;
        const rep = set.representations[0]!;
        const from = starts[i]! + rep.presentationTimeOffset / rep.timescale - g.ptoSec;
        // its segments: the origin's numbers from the part's start, under the origin Period's directory
        const dir = `https://origin.example/show/${g.baseUrl ? `part${i}/` : ''}`;
        const first = g.startNumber + Math.round((from - starts[i]!) / g.segSec);
        expect(rep.segments.map((s) => s.url)).toEqual(Array.from({ length: Math.round(p.duration / g.segSec) }, (_, k) => `${dir}p${i}v0_${first + k}.m4s`));
        expect(rep.timescale).toBe(g.timescale);
        expect(set.representations.length).toBe(g.rungs);
        expect(p.sets.some((s) => s.contentType === 'audio')).toBe(g.audio);
        return { period: i, from, to: from + p.duration };
      });
      expect(content).toEqual(expectedContent(periods, breaks));

      // the ads: every Period of each placed break, mirroring the origin Period playing at its start
      for (const p of mpd.periods.filter(isAd)) {
        const b = breaks.find((x) => p.id.startsWith(`${x.id}-`))!;
        const i = starts.reduce((found, s, k) => (s <= b.atSeconds ? k : found), 0);
        expect(p.sets.map((s) => s.id), p.id).toEqual([String(i), ...(periods[i]!.audio ? [String(10 + i)] : [])]);
        expect(p.sets[0]!.representations.map((r) => r.id)).toEqual(Array.from({ length: periods[i]!.rungs }, (_, r) => `v${r}`));
      }
      const ads = mpd.periods.filter(isAd).reduce((t, p) => t + p.duration, 0);
      expect(mpd.duration).toBeCloseTo(content.reduce((t, c) => t + c.to - c.from, 0) + ads, 3);
    }), { numRuns: 300 });
  });
});

describe('a multi-Period live (dynamic) origin MPD', () => {
  const AST = Date.parse('2026-01-01T00:00:00Z');
  /**
   * A live origin with a Period per programme: `programme-a` from 0 s (its 30 s complete once `programme-b` starts at
   * 30 s), each with its own timescale, startNumber and presentationTimeOffset; a 20 s window at `nowSec`.
   */
  const originAt = (nowSec: number): string => {
    const seg = 2;
    const windowFrom = Math.max(0, nowSec - 20);
    const segsOf = (from: number, to: number): number[] => { const out: number[] = []; for (let t = Math.ceil(from / seg) * seg; t + seg <= to; t += seg) out.push(t); return out; };
    const period = (id: string, start: number, end: number, ts: number, startNumber: number, ptoSec: number): string => {
      const times = segsOf(Math.max(0, windowFrom - start), Math.min(end, nowSec) - start);
      if (!times.length) return '';
      const first = times[0]!;
      return `<Period id="${id}" start="PT${start}S"><AdaptationSet id="1" contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="100000" width="640" height="360">`
        + `<SegmentTemplate timescale="${ts}" presentationTimeOffset="${ptoSec * ts}" startNumber="${startNumber + first / seg}" media="${id}_$Number$.m4s" initialization="${id}_init.mp4">`
        + `<SegmentTimeline><S t="${(ptoSec + first) * ts}" d="${seg * ts}" r="${times.length - 1}"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period>`;
    };
    const a = period('programme-a', 0, nowSec >= 30 ? 30 : Infinity, 1000, 1, 500);
    const b = nowSec >= 30 ? period('programme-b', 30, Infinity, 90_000, 7000, 12) : '';
    return `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z" minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT20S">${a}${b}</MPD>`;
  };
  const breaks: DashBreak[] = [
    // inside programme-a, then one spanning the programme boundary (26–36 s), then one in programme-b
    { id: 'scte-1', atSeconds: 10, resumeSeconds: 16, ads: [ad('scte-1-0', 6)] },
    { id: 'scte-2', atSeconds: 26, resumeSeconds: 36, ads: [ad('scte-2-0', 6), ad('scte-2-1', 4)] },
    { id: 'scte-3', atSeconds: 44, resumeSeconds: 48, ads: [ad('scte-3-0', 4)] },
  ];

  it('keeps every Period\'s id and start across refreshes, and a Period once published as it was', () => {
    const published = new Map<string, { start: number; duration?: number }>();
    let seenSpan = false;
    for (let now = 4; now <= 70; now += 2) {
      const read = readOk(originAt(now), AST + now * 1000);
      const text = stitchMpd(read, { mpdUrl: MPD_URL, breaks, emptyTextUri: '/e.vtt', live: { location: '/v1/dash/g/live.mpd?sessionId=s' } });
      expect(checkMpd(text).filter((f) => f.severity === 'error'), `at ${now} s`).toEqual([]);
      const periods = liveTimeline(read, breaks);
      expect(new Set(periods.map((p) => p.id)).size).toBe(periods.length);
      periods.forEach((p, k) => {
        const before = published.get(p.id);
        if (before) {
          expect(p.start, `${p.id} at ${now} s`).toBe(before.start);
          // a Period's length never changes once written; the open one gets its end once
          if (before.duration !== undefined) expect(p.duration, `${p.id} at ${now} s`).toBe(before.duration);
        }
        published.set(p.id, { start: p.start, ...(p.duration !== undefined ? { duration: p.duration } : {}) });
        const next = periods[k + 1];
        if (next && p.duration !== undefined) expect(p.start + p.duration).toBeCloseTo(next.start, 6);
      });
      if (now === 40) {
        // the break across the programme boundary: programme-a ends at it, programme-b resumes at its end
        expect(periods.map((p) => [p.id, p.start, p.duration])).toEqual([
          ['content-programme-a', 0, 10], ['scte-1-0', 10, 6], ['content-scte-1', 16, 10], ['scte-2-0', 26, 6], ['scte-2-1', 32, 4], ['content-scte-2', 36, undefined],
        ].slice(periods[0]!.id === 'content-programme-a' ? 0 : 2));
        const resumed = readTestMpd(text, VIEWER_URL).periods.find((p) => p.id === 'content-scte-2')!.sets[0]!.representations[0]!;
        // programme-b's own timescale and media time: 12 s + 6 s into it
        expect([resumed.timescale, resumed.presentationTimeOffset, resumed.startNumber]).toEqual([90_000, 18 * 90_000, 7003]);
        seenSpan = true;
      }
    }
    expect(seenSpan).toBe(true);
    expect([...published.keys()]).toEqual(['content-programme-a', 'scte-1-0', 'content-scte-1', 'scte-2-0', 'scte-2-1', 'content-scte-2', 'scte-3-0', 'content-scte-3']);
  });
});
