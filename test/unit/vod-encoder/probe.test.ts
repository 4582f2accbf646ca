import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { parseRate, probeMedia } from '../../../vod-encoder/probe.js';
import { tempDir } from './helpers.js';

let dir = '';
let cleanup: () => Promise<void> = async () => {};
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('vod-probe'));
  await generateMedia('clip', path.join(dir, 'clip.mp4'), { seconds: 3, size: '640x360' });
  await generateMedia('text', path.join(dir, 'fake.mp4'));
  await generateMedia('truncated', path.join(dir, 'truncated.mp4'));
});
afterAll(() => cleanup());

describe('probeMedia', () => {
  it('reads duration, size, frame rate and codecs of a generated clip', async () => {
    const r = await probeMedia(path.join(dir, 'clip.mp4'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({ width: 640, height: 360, frameRate: 30, videoCodec: 'h264', audioCodec: 'aac',
      audioSampleRate: 48000, hasAudio: true, hasVideo: true });
    expect(r.value.durationSec).toBeCloseTo(3, 1);
  });

  it('rejects a text file posing as video with a clear reason', async () => {
    const r = await probeMedia(path.join(dir, 'fake.mp4'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('VOD_NOT_MEDIA');
    expect(r.error.reason).toMatch(/invalid data|moov|not media|format/i);
  });

  it('rejects a truncated mp4 whose index is missing', async () => {
    const r = await probeMedia(path.join(dir, 'truncated.mp4'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('VOD_NOT_MEDIA');
    expect(r.error.reason).toMatch(/moov atom not found|invalid data/i);
  });

  it('rejects a missing file without throwing', async () => {
    const r = await probeMedia(path.join(dir, 'nope.mp4'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toMatch(/No such file/);
  });

  it('reports the display size of a phone video stored landscape with a 90 degree rotation', async () => {
    const file = path.join(dir, 'rotated.mp4');
    const plain = await generateMedia('noaudio', path.join(dir, 'landscape.mp4'), { seconds: 1, size: '320x180' });
    // ffmpeg 5.1 writes the display matrix only on stream copy.
    await new Promise<void>((resolve, reject) => execFile('ffmpeg', ['-v', 'error', '-y', '-i', plain, '-c', 'copy',
      '-metadata:s:v:0', 'rotate=90', file], (e) => (e ? reject(e) : resolve())));
    const r = await probeMedia(file);
    expect(r.ok && [r.value.width, r.value.height]).toEqual([180, 320]);
  });

  it('parses rational frame rates', () => {
    expect(parseRate('30000/1001')).toBeCloseTo(29.97, 2);
    expect(parseRate('0/0')).toBe(0);
    expect(parseRate(undefined)).toBe(0);
  });
});
