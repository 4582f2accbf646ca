import { describe, expect, it } from 'vitest';
import { parseIsoDuration, readMpd, segmentStarts, type MpdRead } from '../../../ssai/parse/mpd-reader.js';

const NS = 'xmlns="urn:mpeg:dash:schema:mpd:2011"';
const ok = (text: string): MpdRead => {
  const r = readMpd(text);
  if (!r.ok) throw new Error(r.message);
  return r.value;
};

describe('mpd-reader', () => {
  it('reads ISO 8601 durations as MPDs write them and refuses malformed ones', () => {
    expect(parseIsoDuration('PT16.0S')).toBe(16);
    expect(parseIsoDuration('PT1H2M3.5S')).toBe(3723.5);
    expect(parseIsoDuration('P1DT2H')).toBe(93_600);
    expect(parseIsoDuration('PT')).toBeUndefined();
    expect(parseIsoDuration('16s')).toBeUndefined();
    expect(parseIsoDuration(null)).toBeUndefined();
  });

  it('inherits an AdaptationSet\'s SegmentTemplate with @duration, the last segment cut by the Period', () => {
    const read = ok(`<MPD ${NS} type="static" mediaPresentationDuration="PT10S"><Period>
<AdaptationSet contentType="video" mimeType="video/mp4"><SegmentTemplate timescale="1000" duration="4000" media="v$Number$.m4s" initialization="v.mp4"/>
<Representation id="v" bandwidth="500000" width="640" height="360" codecs="avc1.64001f" frameRate="25"/></AdaptationSet></Period></MPD>`);
    const [v] = read.representations;
    expect(v).toMatchObject({ id: 'v', kind: 'video', width: 640, height: 360, codecs: 'avc1.64001f', frameRate: 25, mimeType: 'video/mp4' });
    expect(v!.addressing).toMatchObject({ timescale: 1000, startNumber: 1, duration: 4000, timeline: false, media: 'v$Number$.m4s' });
    expect(segmentStarts(v!.addressing!)).toEqual([{ start: 0, duration: 4 }, { start: 4, duration: 4 }, { start: 8, duration: 2 }]);
  });

  it('expands a SegmentTimeline, an open repeat (r="-1") up to the Period\'s end, and reads audio and sidecar text', () => {
    const read = ok(`<MPD ${NS} type="static" mediaPresentationDuration="PT8S"><Period>
<AdaptationSet contentType="video"><Representation id="v" mimeType="video/mp4" bandwidth="1"><SegmentTemplate timescale="10" presentationTimeOffset="50" startNumber="7" media="$Time$.m4s">
<SegmentTimeline><S t="50" d="20" r="-1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>
<AdaptationSet contentType="audio" lang="fr"><Representation id="a" mimeType="audio/mp4" codecs="mp4a.40.2" bandwidth="1" audioSamplingRate="44100">
<AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="1"/>
<SegmentTemplate timescale="44100" media="a$Number$.m4s"><SegmentTimeline><S d="88200" r="3"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>
<AdaptationSet contentType="text" mimeType="text/vtt" lang="en"><Representation id="s" bandwidth="256"><BaseURL>s.vtt</BaseURL></Representation></AdaptationSet>
</Period></MPD>`);
    const [v, a, s] = read.representations;
    expect(v!.addressing!.segments.map((x) => [x.t, x.n])).toEqual([[50, 7], [70, 8], [90, 9], [110, 10]]);
    expect(segmentStarts(v!.addressing!)[0]).toEqual({ start: 0, duration: 2 });
    expect(a).toMatchObject({ kind: 'audio', lang: 'fr', audioSamplingRate: 44_100, audioChannels: 1 });
    expect(s).toMatchObject({ kind: 'text', sidecar: true, lang: 'en', mimeType: 'text/vtt' });
  });

  it('reads a live (dynamic) MPD\'s window: its segments from the SegmentTimeline, the Period as far as its live edge', () => {
    const live = (timeline: string): string => `<MPD ${NS} type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z"><Period id="0" start="PT0S">`
      + `<AdaptationSet contentType="video"><Representation id="v" bandwidth="1" mimeType="video/mp4"><SegmentTemplate timescale="10" startNumber="4" media="$Number$.m4s">`
      + `<SegmentTimeline>${timeline}</SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period></MPD>`;
    const read = ok(live('<S t="60" d="20" r="2"/>'));
    expect(read.type).toBe('dynamic');
    expect(read.representations[0]!.addressing!.segments.map((x) => [x.t, x.n])).toEqual([[60, 4], [80, 5], [100, 6]]);
    expect(read.periods[0]!.durationSec).toBe(12);
    // a last S repeating to an end the MPD does not give
    expect(readMpd(live('<S t="60" d="20" r="-1"/>'))).toMatchObject({ ok: false, unsupported: true, message: expect.stringContaining('r="-1"') });
  });

  it('reports the forms it does not split as unsupported, and what is not an MPD as such', () => {
    const period = '<Period><AdaptationSet contentType="video"><Representation id="v" bandwidth="1"><SegmentTemplate duration="2" media="$Number$.m4s"/></Representation></AdaptationSet></Period>';
    expect(readMpd(`<MPD ${NS} type="dynamic">${period}</MPD>`)).toMatchObject({ ok: false, unsupported: true, message: expect.stringContaining('live') });
    // a Period of several whose length nothing gives (no @duration, no next @start)
    expect(readMpd(`<MPD ${NS} mediaPresentationDuration="PT4S">${period}${period}</MPD>`)).toMatchObject({ ok: false, unsupported: true, message: expect.stringContaining('Period 0 has no length') });
    expect(readMpd(`<MPD ${NS} mediaPresentationDuration="PT4S"><Period><AdaptationSet contentType="video"><Representation id="v" bandwidth="1"><SegmentBase indexRange="0-99"/></Representation></AdaptationSet></Period></MPD>`))
      .toMatchObject({ ok: false, unsupported: true, message: expect.stringContaining('SegmentBase') });
    expect(readMpd('#EXTM3U\n')).toMatchObject({ ok: false, unsupported: false });
    expect(readMpd('<MPD><Period>')).toMatchObject({ ok: false, unsupported: false });
  });
});
