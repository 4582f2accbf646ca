import { describe, expect, it } from 'vitest';
import { readMpd, type MpdRead } from '../../../ssai/parse/mpd-reader.js';
import { stitchMpd, type DashAd } from '../../../ssai/stitch/mpd-stitcher.js';
import { readTestMpd } from '../../helpers/dash-mpd.js';

const MPD_URL = 'https://origin.example/path/vod/manifest.mpd?token=a$b';
const ORIGIN = `<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S">
<Location>https://origin.example/elsewhere.mpd</Location><BaseURL>media/</BaseURL><Period id="p">
<EventStream schemeIdUri="urn:example"><Event presentationTime="1"/></EventStream>
<AdaptationSet id="7" contentType="video" mimeType="video/mp4" lang="en"><Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
<SegmentTemplate timescale="1000" duration="2000" startNumber="3" media="v_$RepresentationID$_$Number$.m4s" initialization="v_$RepresentationID$.mp4"/>
<Representation id="hi" bandwidth="900000" width="1280" height="720" codecs="avc1.64001f"/>
<Representation id="lo" bandwidth="300000" width="640" height="360" codecs="avc1.64001e"/></AdaptationSet>
<AdaptationSet id="8" contentType="image" mimeType="image/jpeg"><SegmentTemplate duration="2" media="t$Number$.jpg"/><Representation id="thumbs" bandwidth="1"/></AdaptationSet>
</Period></MPD>`;

const read = (): MpdRead => {
  const r = readMpd(ORIGIN);
  if (!r.ok) throw new Error(r.message);
  return r.value;
};

const ad = (id: string, seconds: number): DashAd => ({
  periodId: id, duration: seconds,
  rendition: (rep) => ({ init: `https://cdn.example/ad$/${rep.id}/init.mp4`, mediaPrefix: `/v1/segment/g/s/${id}/0/${rep.id}/`, mediaSuffix: '.m4s',
    durations: [2, 2, seconds - 4], bandwidth: 100, width: rep.width ?? 0, height: rep.height ?? 0, timescale: 90_000 }),
});

describe('mpd-stitcher', () => {
  it('splits a @duration template at a break: numbers and presentationTimeOffset follow the content\'s media time', () => {
    const text = stitchMpd(read(), { mpdUrl: MPD_URL, breaks: [{ id: 'b', atSeconds: 4, resumeSeconds: 4, ads: [ad('b-0', 5)] }], emptyTextUri: '/e.vtt' });
    const mpd = readTestMpd(text, 'https://engine.example/v1/dash/g/vod/manifest.mpd');
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([['content-0', 0, 4], ['b-0', 4, 5], ['content-1', 9, 6]]);
    expect(mpd.duration).toBe(15);
    const after = mpd.periods[2]!;
    // the MPD's BaseURL resolved against the origin's URL (its query dropped, as any relative resolution does)
    expect(after.baseUrl).toBe('https://origin.example/path/vod/media/');
    expect(after.sets.map((s) => s.id)).toEqual(['7']); // the thumbnails' set, of a kind not read, is left out
    const hi = after.sets[0]!.representations[0]!;
    expect([hi.startNumber, hi.presentationTimeOffset, hi.timescale]).toEqual([5, 4000, 1000]);
    // the origin's Location is not passed on (a reload would leave the proxy); its EventStream goes with the content
    // Period its Event is in (at 1 s: the first), the stream's offset that of the Period (0)
    expect(text).not.toContain('Location');
    expect(text.match(/<EventStream /g)?.length).toBe(1);
    expect(text.indexOf('<EventStream ')).toBeLessThan(text.indexOf('id="b-0"'));
    expect(text).toContain('<EventStream schemeIdUri="urn:example"><Event presentationTime="1"/></EventStream>');
  });

  it('mirrors the content\'s AdaptationSets in an ad Period, with literal $ escaped in its templates', () => {
    const text = stitchMpd(read(), { mpdUrl: MPD_URL, breaks: [{ id: 'pre', atSeconds: 0, resumeSeconds: 0, ads: [ad('pre-0', 5)] }], emptyTextUri: '/e.vtt' });
    const mpd = readTestMpd(text, 'https://engine.example/v1/dash/g/vod/manifest.mpd');
    const pre = mpd.periods[0]!;
    expect(pre.id).toBe('pre-0');
    expect(pre.sets.map((s) => [s.id, s.contentType, s.lang, s.mimeType])).toEqual([['7', 'video', 'en', 'video/mp4']]);
    expect(pre.sets[0]!.representations.map((r) => [r.id, r.codecs, r.width, r.height])).toEqual([['hi', 'avc1.64001f', 1280, 720], ['lo', 'avc1.64001e', 640, 360]]);
    const hi = pre.sets[0]!.representations[0]!;
    expect(hi.init).toBe('https://cdn.example/ad$/hi/init.mp4');
    expect(text).toContain('initialization="https://cdn.example/ad$$/hi/init.mp4"');
    expect(hi.segments.map((s) => [s.url, s.t, s.d])).toEqual([
      ['https://engine.example/v1/segment/g/s/pre-0/0/hi/0.m4s', 0, 180_000],
      ['https://engine.example/v1/segment/g/s/pre-0/0/hi/1.m4s', 180_000, 180_000],
      ['https://engine.example/v1/segment/g/s/pre-0/0/hi/2.m4s', 360_000, 90_000],
    ]);
    expect(text).toContain('<Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>');
  });

  it('drops the content under a break that replaces it, and a break inside replaced content', () => {
    const text = stitchMpd(read(), { mpdUrl: MPD_URL, emptyTextUri: '/e.vtt', breaks: [
      { id: 'r', atSeconds: 2, resumeSeconds: 6, ads: [ad('r-0', 4)] },
      { id: 'inside', atSeconds: 4, resumeSeconds: 4, ads: [ad('inside-0', 5)] },
      { id: 'post', atSeconds: 10, resumeSeconds: 10, ads: [ad('post-0', 5)] },
      { id: 'empty', atSeconds: 8, resumeSeconds: 8, ads: [] },
    ] });
    const mpd = readTestMpd(text, 'https://engine.example/m.mpd');
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([['content-0', 0, 2], ['r-0', 2, 4], ['content-1', 6, 4], ['post-0', 10, 5]]);
    const resumed = mpd.periods[2]!.sets[0]!.representations[1]!;
    expect([resumed.startNumber, resumed.presentationTimeOffset]).toEqual([6, 6000]);
  });
});
