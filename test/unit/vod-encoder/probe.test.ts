import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { parseRate, probeMedia } from '../../../vod-encoder/probe.js';
import { firstErrorLine, withoutServerPaths } from '../../../vod-encoder/errors.js';
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
    // one line that says why: not the command, not the server's path, not stderr twice
    expect(r.error.reason).not.toContain('\n');
    expect(r.error.reason).not.toContain(dir);
    expect(r.error.reason).not.toMatch(/ffprobe|Command failed|@ 0x/);
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

describe('tool errors made public', () => {
  const stderr = '[mov,mp4,m4a,3gp,3g2,mj2 @ 0x558bf9e5f1c0] moov atom not found\n/srv/engine/data/uploads/1732-fake.mp4: Invalid data found when processing input\n';

  it('takes the first line that says why, without the demuxer prefix or the path', () => {
    expect(firstErrorLine(stderr, '/srv/engine/data/uploads/1732-fake.mp4')).toBe('moov atom not found');
    expect(firstErrorLine('/srv/x/a.bin: Invalid data found when processing input\n', '/srv/x/a.bin')).toBe('Invalid data found when processing input');
    expect(firstErrorLine('\n\n', '/a')).toBe('');
  });

  it('replaces server paths by file names and leaves URLs alone', () => {
    expect(withoutServerPaths('Error opening /srv/engine/data/media/vod/g/e1/v0.m3u8 for writing')).toBe('Error opening v0.m3u8 for writing');
    expect(withoutServerPaths('http://127.0.0.1:8080/media/vod/a/b.mp4: 404')).toBe('http://127.0.0.1:8080/media/vod/a/b.mp4: 404');
    expect(withoutServerPaths('ratio 16/9 and 1/2 s')).toBe('ratio 16/9 and 1/2 s');
  });
});
