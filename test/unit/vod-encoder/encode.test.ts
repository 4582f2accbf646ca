import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { encodeVod, type EncodeProgress } from '../../../vod-encoder/encode.js';
import { parseStatsLine } from '../../../vod-encoder/ffmpeg-runner.js';
import { probeMedia } from '../../../vod-encoder/probe.js';
import { spriteLayout, spriteVtt } from '../../../vod-encoder/thumbnails.js';
import { tempDir } from './helpers.js';

const exists = (f: string): Promise<boolean> => access(f).then(() => true, () => false);
let dir = '';
let cleanup: () => Promise<void> = async () => {};
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('vod-encode'));
  await generateMedia('clip', path.join(dir, 'clip.mp4'), { seconds: 6, size: '640x360' });
  await generateMedia('noaudio', path.join(dir, 'noaudio.mp4'), { seconds: 3 });
  await generateMedia('text', path.join(dir, 'fake.mp4'));
});
afterAll(() => cleanup());

describe('encodeVod', () => {
  it('reports progress with percent, speed and ETA up to 100', async () => {
    const seen: EncodeProgress[] = [];
    const r = await encodeVod(path.join(dir, 'clip.mp4'), { outDir: path.join(dir, 'p'), preset: 'ultrafast',
      onProgress: (p) => seen.push(p) }).done;
    expect(r.ok).toBe(true);
    expect(seen.some((p) => p.stage === 'encode' && p.speedX > 0)).toBe(true);
    const percents = seen.map((p) => p.percent);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(seen.at(-1)).toMatchObject({ percent: 100, etaSec: 0, stage: 'done' });
    if (r.ok) expect(r.value.ladder.rungs.map((x) => x.height)).toEqual([360]);
  });

  it('gives a source without audio a silent AAC track so every rendition has audio', async () => {
    const out = path.join(dir, 'na');
    const r = await encodeVod(path.join(dir, 'noaudio.mp4'), { outDir: out, preset: 'ultrafast' }).done;
    expect(r.ok).toBe(true);
    const p = await probeMedia(path.join(out, 'mp4', '180.mp4'));
    expect(p.ok && p.value.hasAudio).toBe(true);
    if (p.ok) expect(p.value.durationSec).toBeCloseTo(3, 0);
  });

  it('fails a text file with VOD_NOT_MEDIA and writes nothing', async () => {
    const out = path.join(dir, 'bad');
    const r = await encodeVod(path.join(dir, 'fake.mp4'), { outDir: out }).done;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('VOD_NOT_MEDIA');
    expect(await exists(out)).toBe(false);
  });

  it('cancels a running encode, kills ffmpeg and leaves no partial output', async () => {
    const out = path.join(dir, 'cancel');
    const handle = encodeVod(path.join(dir, 'clip.mp4'), { outDir: out, preset: 'veryslow',
      onProgress: (p) => { if (p.stage === 'encode') handle.cancel(); } });
    const r = await handle.done;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('VOD_ENCODE_CANCELED');
    expect(await exists(out)).toBe(false);
    expect(await exists(`${out}.partial`)).toBe(false);
  });

  it('returns ffmpeg stderr as the reason when the encode itself fails', async () => {
    const r = await encodeVod(path.join(dir, 'clip.mp4'), { outDir: path.join(dir, 'x'), preset: 'no-such-preset' }).done;
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('VOD_ENCODE_FAILED');
      expect(r.error.reason).toMatch(/preset/i);
    }
  });

  it('writes a thumbnail track whose cues cover the clip with sprite fragments', async () => {
    const vtt = await readFile(path.join(dir, 'p', 'thumbs', 'thumbs.vtt'), 'utf8');
    expect(vtt.startsWith('WEBVTT')).toBe(true);
    expect(vtt).toContain('00:00:04.000 --> 00:00:06.000\nsprite.jpg#xywh=320,0,160,90');
  });
});

describe('helpers of the encoder', () => {
  it('parses an ffmpeg stats line', () => {
    expect(parseStatsLine('frame=  120 fps= 60 q=28.0 size=N/A time=00:01:04.50 bitrate=N/A speed=2.01x'))
      .toEqual({ timeSec: 64.5, speedX: 2.01 });
    expect(parseStatsLine('Input #0, mov,mp4')).toBeNull();
  });

  it('lays out sprite tiles ten to a row', () => {
    const l = spriteLayout(45, 1920, 1080);
    expect(l).toMatchObject({ tiles: 23, columns: 10, rows: 3, tileWidth: 160, tileHeight: 90 });
    expect(spriteVtt(l, 45, 's.jpg')).toContain('00:00:44.000 --> 00:00:45.000\ns.jpg#xywh=320,180,160,90');
  });
});
