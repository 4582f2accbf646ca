import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Parser } from 'm3u8-parser';
import { parse as parseMpd } from 'mpd-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia, SPEECH_SENTENCE } from '../../../fixtures/generate-media.js';
import { attachCaptions, generateCaptions, parseSphinxTimes, wordsToCues, type Cue } from '../../../vod-encoder/captions.js';
import { encodeVod } from '../../../vod-encoder/encode.js';
import { probeMedia } from '../../../vod-encoder/probe.js';
import { buildRecords } from '../../../vod-encoder/records.js';
import { decode, tempDir } from './helpers.js';

let dir = '';
let speech = '';
let cleanup: () => Promise<void> = async () => {};
let cues: Cue[] = [];
let vtt = '';
let clipSec = 0;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('vod-captions'));
  speech = await generateMedia('speech', path.join(dir, 'speech.mp4'));
  const p = await probeMedia(speech);
  if (!p.ok) throw new Error(p.error.reason);
  clipSec = p.value.durationSec;
  const r = await generateCaptions(speech);
  if (!r.ok) throw new Error(r.error.reason);
  ({ cues, vtt } = r.value);
});
afterAll(() => cleanup());

describe('captions from speech', () => {
  it('recognizes at least half of the words of the espeak-ng sentence', () => {
    const heard = cues.flatMap((c) => c.text.split(' '));
    const expected = SPEECH_SENTENCE.split(' ');
    const pool = [...heard];
    const hits = expected.filter((w) => {
      const i = pool.indexOf(w);
      if (i >= 0) pool.splice(i, 1);
      return i >= 0;
    }).length;
    expect(hits / expected.length).toBeGreaterThanOrEqual(0.5);
  });

  it('keeps cues within the clip, in order, at most 5 s and 42 characters', () => {
    expect(cues.length).toBeGreaterThan(0);
    let last = 0;
    for (const c of cues) {
      expect(c.start).toBeGreaterThanOrEqual(last);
      expect(c.end).toBeGreaterThan(c.start);
      expect(c.end).toBeLessThanOrEqual(clipSec);
      expect(c.end - c.start).toBeLessThanOrEqual(5);
      expect(c.text.length).toBeLessThanOrEqual(42);
      last = c.end;
    }
    expect(vtt.startsWith('WEBVTT\n')).toBe(true);
    expect(vtt).toMatch(/\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n/);
  });

  it('parses pocketsphinx word times and drops silence markers and alternate suffixes', () => {
    const words = parseSphinxTimes('the weather\n<s> 0.000 0.020 0.99\nthe(2) 0.030 0.140 0.07\n<sil> 0.2 0.3 1\n[NOISE] 0.3 0.4 1\nweather 0.400 0.820 0.5\n');
    expect(words).toEqual([{ word: 'the', start: 0.03, end: 0.14 }, { word: 'weather', start: 0.4, end: 0.82 }]);
  });

  it('splits cues at 5 s, at 42 characters and at long pauses', () => {
    const w = (word: string, start: number, end: number) => ({ word, start, end });
    expect(wordsToCues([w('a', 0, 1), w('b', 1, 4), w('c', 4, 6)]).map((c) => c.text)).toEqual(['a b', 'c']);
    expect(wordsToCues([w('x'.repeat(30), 0, 1), w('y'.repeat(12), 1, 2)]).length).toBe(2);
    expect(wordsToCues([w('a', 0, 1), w('b', 3, 4)]).length).toBe(2);
  });
});

describe('attachCaptions', () => {
  it('adds a SUBTITLES rendition to the HLS master and a text AdaptationSet to the MPD', async () => {
    const out = path.join(dir, 'out');
    const enc = await encodeVod(speech, { outDir: out, preset: 'ultrafast' }).done;
    if (!enc.ok) throw new Error(enc.error.reason);
    await attachCaptions(out, vtt, enc.value.mediaInfo.durationSec);
    await attachCaptions(out, vtt, enc.value.mediaInfo.durationSec); // twice: must stay one rendition

    const p = new Parser();
    p.push(await readFile(path.join(out, 'cmaf', 'master.m3u8'), 'utf8'));
    p.end();
    expect(Object.keys(p.manifest.mediaGroups?.['SUBTITLES']?.['subs'] ?? {})).toEqual(['English']);
    expect(p.manifest.playlists?.every((v) => v.attributes.SUBTITLES === 'subs')).toBe(true);
    const subs = await readFile(path.join(out, 'cmaf', 'subs_en.m3u8'), 'utf8');
    expect(subs).toContain('subs_en.vtt');

    const mpdText = await readFile(path.join(out, 'cmaf', 'manifest.mpd'), 'utf8');
    expect(mpdText.match(/contentType="text"/g)).toHaveLength(1);
    const mpd = parseMpd(mpdText, { manifestUri: 'http://h/cmaf/manifest.mpd' });
    const en = mpd.mediaGroups['SUBTITLES']?.['subs']?.['en'];
    expect(en).toBeDefined();

    const records = await buildRecords({ outDir: out, sourceGuid: 'g', cdnBase: 'http://h', destBucket: 'b' });
    expect(records.ok).toBe(true);
    const d = await decode(path.join(out, 'cmaf', 'master.m3u8'));
    expect(d.errors).toBe('');
  });
});
