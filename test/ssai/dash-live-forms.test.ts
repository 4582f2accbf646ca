// Issue 33, live origin forms: ffmpeg's dash muxer with -use_timeline 0 (SegmentTemplate@duration with $Number$, no
// SegmentTimeline: the window is the wall clock's, DASH-IF IOP 4.3) whose video segments carry a SCTE-35 splice_insert
// in emsg boxes (InbandEventStream), through the proxy. A viewer's MPD, reloaded as the window moves across the break,
// lists the clock's window as a SegmentTimeline and becomes multi-Period at the break, its Period ids and starts the
// same on every reload; the segments are read for their cues once, whatever the viewers.
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_LIVE_MPD_PATH, DASH_LIVE_SEGMENT_SECONDS, DashLiveOrigin, windowOf, type DashLiveBreaks } from '../../fixtures/dash-live-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { childrenNamed } from '../../ssai/parse/mpd-reader.js';
import { readTestMpd, type TestMpd } from '../helpers/dash-mpd.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** One break of 10 s at 10 s of the origin's Period, its emsg in the video segments of the 6 s before it: ads a and b. */
const BREAK: DashLiveBreaks = { firstAtSec: 10, everySec: 10_000, durationSec: AD_SECONDS.a + AD_SECONDS.b, announceSec: 6, scheme: 'bin' };
const BREAK_ID = 'scte-1000';
const RESUME = BREAK.firstAtSec + BREAK.durationSec;

type Snapshot = { text: string; mpd: TestMpd; heads: Map<string, string> };

describe('live DASH addressed by SegmentTemplate@duration, with SCTE-35 in emsg boxes, through the proxy', () => {
  let h: SsaiHarness;
  let origin: DashLiveOrigin;
  let guid: string;
  let reloadUrl = '';
  const seen: Snapshot[] = [];

  const snapshot = (text: string, url: string): Snapshot => {
    const root = new DOMParser().parseFromString(text, 'text/xml').documentElement!;
    // each Period's own element (its id, start, duration), by id
    const heads = new Map(childrenNamed(root, 'Period').map((p) => [p.getAttribute('id') ?? '', `${p.getAttribute('start')} ${p.getAttribute('duration') ?? ''}`]));
    return { text, mpd: readTestMpd(text, url), heads };
  };

  /** Waits for the origin's clock to reach `edgeSec`, then reloads the viewer's MPD, a segment apart, until it shows `ok`. */
  async function reloadAt(edgeSec: number, ok: (s: Snapshot) => boolean): Promise<Snapshot> {
    let edge = edgeSec;
    for (;;) {
      await origin.waitFor((m) => (windowOf(m)?.toSec ?? 0) >= edge, 90_000);
      const res = await h.get(reloadUrl);
      expect(res.status, res.text).toBe(200);
      const s = snapshot(res.text, reloadUrl);
      if (ok(s)) { seen.push(s); return s; }
      // (a segment's file comes a moment after the clock makes it available: its cues are read on a later reload)
      if (edge > edgeSec + 4 * DASH_LIVE_SEGMENT_SECONDS) throw new Error(`the viewer's MPD never showed what was waited for: ${s.text}`);
      edge += DASH_LIVE_SEGMENT_SECONDS;
    }
  }

  beforeAll(async () => {
    [origin, h] = await Promise.all([DashLiveOrigin.start({ breaks: BREAK, addressing: 'duration', inband: true }), startSsai()]);
    guid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    // the viewer arrives once the segment [4, 6) s carrying the cue is out (its file a moment after the clock says so)
    await origin.waitFor((m) => (windowOf(m)?.toSec ?? 0) >= BREAK.firstAtSec - BREAK.announceSec + 2 * DASH_LIVE_SEGMENT_SECONDS, 60_000);
    const url = `${h.engine.url}/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    reloadUrl = new URL(/<Location>([^<]+)<\/Location>/.exec(res.text)![1]!, url).href;
    seen.push(snapshot(res.text, url));
    // in the break: its Periods published (the cue read from the segments, decided once)
    await reloadAt(BREAK.firstAtSec + 4, (s) => s.heads.has(`${BREAK_ID}-0`));
    // the content back, and the window (12 s of time shift) past the content before the break
    await reloadAt(RESUME + 4, (s) => s.heads.has(`content-${BREAK_ID}`) && !s.heads.has('content-0'));
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  it('lists the clock\'s window as a SegmentTimeline of the origin\'s numbers, reloaded every segment', async () => {
    const originMpd = (await origin.mpd())!;
    expect(originMpd).not.toContain('SegmentTimeline');
    expect(originMpd).toContain('minimumUpdatePeriod="PT500S"');
    for (const s of seen) {
      expect(s.text).toContain('type="dynamic"');
      expect(s.text).toContain(`minimumUpdatePeriod="PT${DASH_LIVE_SEGMENT_SECONDS}S"`);
      for (const p of s.mpd.periods.filter((x) => x.id.startsWith('content-'))) for (const set of p.sets) for (const rep of set.representations) {
        expect(s.text).toContain('<SegmentTimeline>');
        // number n covers [2(n − 1), 2n) s, as the origin's @duration and startNumber 1 say
        for (const seg of rep.segments) {
          const n = Math.round(seg.t / rep.timescale / DASH_LIVE_SEGMENT_SECONDS) + 1;
          expect(seg.url).toBe(`${origin.url}/live/chunk-stream${rep.id}-${String(n).padStart(5, '0')}.m4s`);
          expect(seg.d / rep.timescale).toBe(DASH_LIVE_SEGMENT_SECONDS);
        }
      }
    }
  });

  it('splits the Period at the emsg cue\'s break, and keeps every Period\'s id and start across reloads', () => {
    const last = seen[seen.length - 1]!;
    expect(last.mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      [`${BREAK_ID}-0`, BREAK.firstAtSec, AD_SECONDS.a],
      [`${BREAK_ID}-1`, BREAK.firstAtSec + AD_SECONDS.a, AD_SECONDS.b],
      [`content-${BREAK_ID}`, RESUME, 0],
    ]);
    for (const set of last.mpd.periods[2]!.sets) for (const rep of set.representations) {
      expect(rep.presentationTimeOffset / rep.timescale).toBe(RESUME);
      expect(rep.segments[0]!.t / rep.timescale).toBe(RESUME);
    }
    const inBreak = seen[1]!;
    expect([...inBreak.heads.keys()].slice(0, 3)).toEqual(['content-0', `${BREAK_ID}-0`, `${BREAK_ID}-1`]);
    expect(inBreak.heads.get('content-0')).toBe(`PT0S PT${BREAK.firstAtSec}S`);
    const first = new Map<string, string>();
    for (const s of seen) for (const [id, head] of s.heads) {
      const known = first.get(id);
      // a Period once given its end keeps its start and length (an open content Period gets its end once)
      if (known && known.split(' ')[1]) expect(head, id).toBe(known);
      else first.set(id, head);
      expect(head.split(' ')[0], id).toBe(first.get(id)!.split(' ')[0]);
    }
    // ad_marker_passthrough on (the default): the content Periods keep the origin's InbandEventStream, the ad Periods carry none
    for (const period of last.text.split('<Period').slice(1)) expect(period.includes('scte35:2013:bin'), period.slice(0, 80)).toBe(/^[^>]*id="content-/.test(period));
    expect(h.vast.requests.filter((r) => r.path === '/vast4').length).toBe(1);
  });

  it('reads the video segments for their cues once however many viewers, and never the audio\'s', async () => {
    for (let viewer = 0; viewer < 3; viewer++) expect((await h.get(`/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`)).status).toBe(200);
    // (a segment asked before ffmpeg wrote it is asked again: it was not read)
    const video = [...origin.served].filter(([p]) => /\/chunk-stream0-\d+\.m4s$/.test(p));
    expect(video.length).toBeGreaterThan(3);
    for (const [p, count] of video) expect(count, p).toBe(1);
    expect([...origin.requests.keys()].filter((p) => /\/chunk-stream1-/.test(p))).toEqual([]);
  });
});
