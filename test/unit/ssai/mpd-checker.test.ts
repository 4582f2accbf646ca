// Issue 33: `engine check-playlist` on an MPD, the pure part (ssai/check/mpd-checker.ts): hand-written MPDs of the
// shape the proxy writes (content Periods split from one origin Period around an ad Period), each broken one way.
import { describe, expect, it } from 'vitest';
import { checkMpd, fillTemplate, mpdSegmentProbes } from '../../../ssai/check/mpd-checker.js';

const mpd = (periods: string, duration = 'PT16S') =>
  `<?xml version="1.0" encoding="utf-8"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="${duration}">${periods}</MPD>`;
/** A video Representation on a 1 kHz timeline: `segs` its S elements, `pto` its presentationTimeOffset. */
const video = (segs: string, pto = 0) => `<AdaptationSet id="0" contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="1000" codecs="avc1.64001f">`
  + `<SegmentTemplate timescale="1000" presentationTimeOffset="${pto}" initialization="init-$RepresentationID$.mp4" media="$RepresentationID$-$Number$.m4s">`
  + `<SegmentTimeline>${segs}</SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>`;
const audio = (segs: string, pto = 0) => `<AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" lang="en"><Representation id="a" bandwidth="96000" codecs="mp4a.40.2">`
  + `<SegmentTemplate timescale="48000" presentationTimeOffset="${pto}" initialization="init-a.mp4" media="a-$Time$.m4s"><SegmentTimeline>${segs}</SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>`;
const period = (id: string, start: number, duration: number, body: string) => `<Period id="${id}" start="PT${start}S" duration="PT${duration}S">${body}</Period>`;

// content 0–6 s, an ad 6–10 s, the content again from its 6 s (presentationTimeOffset 6 s) to its end at 12 s
const content0 = period('content-0', 0, 6, video('<S t="0" d="2000" r="2"/>') + audio('<S t="0" d="96000" r="2"/>'));
const ad = period('ad-0', 6, 4, video('<S t="0" d="2000" r="1"/>') + audio('<S t="0" d="96000" r="1"/>'));
// the audio resumes with a segment starting an AAC frame (1024 samples) before the Period: allowed
const content1 = (start = 10, segs = '<S t="6000" d="2000" r="2"/>') =>
  period('content-1', start, 6, video(segs, 6000) + audio('<S t="286976" d="97024"/><S d="96000" r="1"/>', 288000));
const rules = (text: string) => checkMpd(text).map((f) => [f.rule, f.severity]);

describe('checkMpd', () => {
  it('finds nothing in contiguous Periods whose timelines cover them, offsets matching the content\'s media time', () => {
    expect(checkMpd(mpd(content0 + ad + content1()))).toEqual([]);
  });

  it('reads SegmentList, SegmentTemplate@duration and a sidecar file as well as SegmentTimeline', () => {
    const list = `<AdaptationSet contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="1"><SegmentList timescale="1" duration="2">`
      + '<Initialization sourceURL="i.mp4"/><SegmentURL media="s1.m4s"/><SegmentURL media="s2.m4s"/><SegmentURL media="s3.m4s"/></SegmentList></Representation></AdaptationSet>';
    const every = `<AdaptationSet contentType="audio" mimeType="audio/mp4"><SegmentTemplate timescale="10" duration="20" media="a$Number$.m4s" initialization="ai.mp4"/><Representation id="a" bandwidth="1"/></AdaptationSet>`;
    const vtt = '<AdaptationSet contentType="text" mimeType="text/vtt"><Representation id="t" bandwidth="1"><BaseURL>subs.vtt</BaseURL></Representation></AdaptationSet>';
    expect(checkMpd(mpd(period('p', 0, 6, list + every + vtt), 'PT6S'))).toEqual([]);
    // a SegmentList two segments short of its Period
    expect(rules(mpd(period('p', 0, 10, list + every + vtt), 'PT10S'))).toEqual([['MPD_TIMELINE_SHORT', 'error']]);
  });

  it('reports a gap and an overlap between Periods, beyond the 1 ms durations are written to', () => {
    expect(checkMpd(mpd(content0 + ad + content1(10.001)))).toEqual([]);
    const gap = checkMpd(mpd(content0 + ad + content1(10.5), 'PT16.5S'));
    expect(gap).toEqual([expect.objectContaining({ rule: 'MPD_PERIOD_GAP', severity: 'error', message: expect.stringContaining('Period "content-1" starts at 10.5 s, 0.5 s after Period "ad-0" ends (10 s)') })]);
    expect(rules(mpd(content0 + ad + content1(9.5), 'PT15.5S'))).toEqual([['MPD_PERIOD_OVERLAP', 'error']]);
  });

  it('warns when the last Period does not end at mediaPresentationDuration', () => {
    expect(checkMpd(mpd(content0 + ad + content1(), 'PT18S'))).toEqual([expect.objectContaining({ rule: 'MPD_DURATION_MISMATCH', severity: 'warning', message: expect.stringContaining('ends at 16 s') })]);
  });

  it('reports a Period id used twice', () => {
    expect(rules(mpd(content0 + ad.replace('ad-0', 'content-0') + content1()))).toEqual([['MPD_PERIOD_ID_DUPLICATE', 'error']]);
  });

  it('reports a timeline short of its Period by more than one segment, not by one', () => {
    expect(checkMpd(mpd(content0 + ad + content1(10, '<S t="6000" d="2000" r="1"/>')))).toEqual([]);
    const short = checkMpd(mpd(content0 + ad + content1(10, '<S t="6000" d="2000"/>')));
    expect(short).toEqual([expect.objectContaining({ rule: 'MPD_TIMELINE_SHORT', message: expect.stringContaining('Representation "v" of Period "content-1": its segments cover 2 s of the Period\'s 6 s') })]);
    // a hole inside the timeline counts as well
    expect(rules(mpd(content0 + ad + content1(10, '<S t="6000" d="1000"/><S t="10000" d="1000"/>')))).toEqual([['MPD_TIMELINE_SHORT', 'error']]);
  });

  it('reports a split Period whose first segment lies wholly before its presentationTimeOffset', () => {
    // the timeline restarts at the content's beginning while the offset says 6 s: the Period would replay the start
    const wrong = checkMpd(mpd(content0 + ad + content1(10, '<S t="0" d="2000" r="5"/>')));
    expect(wrong.map((f) => f.rule)).toEqual(['MPD_SEGMENT_BEFORE_PTO']);
    expect(wrong[0]!.message).toContain('starts 6 s before presentationTimeOffset');
  });

  it('warns when a content type of one Period is missing in the next', () => {
    const silentAd = period('ad-0', 6, 4, video('<S t="0" d="2000" r="1"/>'));
    const found = checkMpd(mpd(content0 + silentAd + content1()));
    expect(found.map((f) => [f.rule, f.severity])).toEqual([['MPD_TRACK_MISSING', 'warning'], ['MPD_TRACK_MISSING', 'warning']]);
    expect(found[0]!.message).toContain('audio in Period "content-0", not in Period "ad-0"');
    expect(found[1]!.message).toContain('audio in Period "content-1", not in Period "ad-0"');
  });

  it('reports a body that is not an MPD', () => {
    for (const text of ['#EXTM3U\n#EXT-X-ENDLIST\n', '<?xml version="1.0"?><html/>', '<MPD><Period></MPD>']) {
      expect(rules(text), text).toEqual([['NOT_MPD', 'error']]);
    }
  });

  it('checks only ids and tracks of a dynamic (live) MPD', () => {
    const live = mpd(content0 + ad + content1(10.5)).replace('type="static"', 'type="dynamic"');
    expect(checkMpd(live)).toEqual([]);
    expect(mpdSegmentProbes(live, 'https://o.example/a.mpd')).toEqual([]);
  });
});

describe('mpdSegmentProbes', () => {
  it('lists each Representation\'s init, first and last segment through the BaseURL chain and the templates', () => {
    const text = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT6S"><BaseURL>media/</BaseURL>`
      + `<Period id="p" duration="PT6S"><BaseURL>p1/</BaseURL><AdaptationSet contentType="video" mimeType="video/mp4"><BaseURL>https://cdn.example/v/</BaseURL>`
      + `<Representation id="hd" bandwidth="800000"><SegmentTemplate timescale="1000" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Bandwidth$/$Number%05d$-$Time$-$$.m4s" startNumber="7">`
      + '<SegmentTimeline><S t="100" d="2000" r="2"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>'
      + '<AdaptationSet contentType="text" mimeType="text/vtt"><Representation id="t" bandwidth="1"><BaseURL>subs.vtt</BaseURL></Representation></AdaptationSet></Period></MPD>';
    expect(mpdSegmentProbes(text, 'https://origin.example/show/manifest.mpd?token=1')).toEqual([
      { period: 'p', representation: 'hd', what: 'init', url: 'https://cdn.example/v/hd/init.mp4' },
      { period: 'p', representation: 'hd', what: 'first', url: 'https://cdn.example/v/hd/800000/00007-100-$.m4s' },
      { period: 'p', representation: 'hd', what: 'last', url: 'https://cdn.example/v/hd/800000/00009-4100-$.m4s' },
      { period: 'p', representation: 't', what: 'file', url: 'https://origin.example/show/media/p1/subs.vtt' },
    ]);
  });

  it('fills $Number$, $Time$, $Bandwidth$ and $RepresentationID$ with their widths', () => {
    expect(fillTemplate('$RepresentationID%03d$_$Number%04d$_$Time$_$Bandwidth$$$', { id: '7', bandwidth: '96000', n: 12, t: 345 })).toBe('007_0012_345_96000$');
  });
});
