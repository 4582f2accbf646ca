import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { encodeVod, type EncodeOutputs } from '../../vod-encoder/encode.js';
import { buildRecords, type VodRecords } from '../../vod-encoder/records.js';
import { decode, tempDir } from '../unit/vod-encoder/helpers.js';
import { hasChromium, playHls, servePlayer } from '../helpers/hls-player.js';

const SECONDS = 8;
let out: EncodeOutputs;
let records: VodRecords;
let cleanup: () => Promise<void> = async () => {};

beforeAll(async () => {
  const t = await tempDir('vod-e2e');
  cleanup = t.cleanup;
  const src = await generateMedia('clip', path.join(t.dir, 'src.mp4'), { seconds: SECONDS, size: '854x480' });
  const enc = await encodeVod(src, { outDir: path.join(t.dir, 'out'), preset: 'ultrafast' }).done;
  if (!enc.ok) throw new Error(enc.error.reason);
  out = enc.value;
  const r = await buildRecords({ outDir: out.outDir, sourceGuid: 'e2e', cdnBase: 'http://h/media/vod/e2e', destBucket: 'b' });
  if (!r.ok) throw new Error(r.error.reason);
  records = r.value;
});
afterAll(() => cleanup());

/** Maps a record's cdnUrl back onto the output dir, so the decode reads exactly what the record points at. */
const local = (cdnUrl: string): string => path.join(out.outDir, cdnUrl.replace('http://h/media/vod/e2e/', ''));

async function expectCleanDecode(file: string): Promise<void> {
  const d = await decode(file);
  expect(d.errors, file).toBe('');
  expect(d.exitCode, file).toBe(0);
  expect(Math.abs(d.durationSec - SECONDS), `${file} decoded ${d.durationSec}s`).toBeLessThanOrEqual(0.5);
}

describe('VOD encode end to end', () => {
  it('decodes the HLS master without errors and with the source duration', async () => {
    await expectCleanDecode(local(records.formats.hls.cdnUrl));
  });

  it('decodes every HLS media playlist the formats record lists', async () => {
    for (const v of records.formats.hls.variants) await expectCleanDecode(local(v.cdnUrl));
  });

  it('decodes the DASH manifest without errors and with the source duration', async () => {
    await expectCleanDecode(local(records.formats.dash.cdnUrl));
  });

  it('decodes every MP4 without errors and with the source duration', async () => {
    expect(records.formats.mp4).toHaveLength(2);
    for (const m of records.formats.mp4) {
      await expectCleanDecode(local(m.cdnUrl));
      expect(Math.abs(m.duration - SECONDS)).toBeLessThanOrEqual(0.5);
    }
  });

  it('writes MP4s with the index in front (faststart)', async () => {
    const { readFile } = await import('node:fs/promises');
    for (const m of records.formats.mp4) {
      const head = (await readFile(local(m.cdnUrl))).subarray(0, 64 * 1024).toString('latin1');
      expect(head.indexOf('moov')).toBeGreaterThan(-1);
      expect(head.indexOf('moov')).toBeLessThan(head.indexOf('mdat'));
    }
  });

  it('decodes the poster and the sprite as JPEG images', async () => {
    await expect(decode(local(records.thumbs!.posterUrl))).resolves.toMatchObject({ errors: '', exitCode: 0 });
    await expect(decode(local(records.thumbs!.spriteUrl))).resolves.toMatchObject({ errors: '', exitCode: 0 });
  });

  it('plays the HLS master in hls.js in Chromium past the first segment', async (ctx) => {
    if (!(await hasChromium())) {
      ctx.skip('Chromium is not installed at /usr/bin/chromium (apt-get install chromium); playback not checked');
      return;
    }
    const server = await servePlayer(out.outDir);
    try {
      const r = await playHls(server.base, out.hlsMaster, 5);
      expect(r.fatal).toBeNull();
      expect(r.levels).toBe(2);
      expect(r.playedTo).toBeGreaterThanOrEqual(5);
    } finally {
      await server.close();
    }
  });
});
