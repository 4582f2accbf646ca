import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { encodeVod } from '../../../vod-encoder/encode.js';
import { buildRecords, derivedGuid, type VodRecords } from '../../../vod-encoder/records.js';
import { tempDir } from './helpers.js';

type Kind = 'string' | 'number' | 'boolean' | 'array' | 'object';
const GUID = '0b6f4d0e-1111-4222-8333-444455556666';
const CDN = `http://media.test/media/vod/${GUID}`;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Exactly these keys, each of its type, strings non-empty and numbers finite. */
function expectShape(obj: unknown, shape: Record<string, Kind>, where: string): void {
  expect(typeof obj, where).toBe('object');
  const rec = obj as Record<string, unknown>;
  expect(Object.keys(rec).sort(), where).toEqual(Object.keys(shape).sort());
  for (const [k, kind] of Object.entries(shape)) {
    const v = rec[k];
    if (kind === 'array') expect(Array.isArray(v), `${where}.${k}`).toBe(true);
    else expect(typeof v, `${where}.${k}`).toBe(kind);
    if (kind === 'string') expect((v as string).length, `${where}.${k}`).toBeGreaterThan(0);
    if (kind === 'number') expect(Number.isFinite(v), `${where}.${k}`).toBe(true);
  }
}

let records: VodRecords;
let outDir = '';
let cleanup: () => Promise<void> = async () => {};
beforeAll(async () => {
  const t = await tempDir('vod-records');
  cleanup = t.cleanup;
  const src = await generateMedia('clip', path.join(t.dir, 'src.mp4'), { seconds: 6, size: '854x480' });
  outDir = path.join(t.dir, 'out');
  const enc = await encodeVod(src, { outDir, preset: 'ultrafast' }).done;
  if (!enc.ok) throw new Error(enc.error.reason);
  const r = await buildRecords({ outDir, sourceGuid: GUID, cdnBase: CDN, destBucket: 'vod-media' });
  if (!r.ok) throw new Error(r.error.reason);
  records = r.value;
});
afterAll(() => cleanup());

describe('buildRecords', () => {
  it('builds the formats record with every field of spec 2.12', () => {
    const f = records.formats;
    expectShape(f, { hasHls: 'boolean', hls: 'object', hasDash: 'boolean', dash: 'object', hasMp4: 'boolean', mp4: 'array',
      hasThumbs: 'boolean' }, 'formats');
    expect([f.hasHls, f.hasDash, f.hasMp4, f.hasThumbs]).toEqual([true, true, true, true]);
    expectShape(f.hls, { destBucket: 'string', mediaType: 'string', guid: 'string', variants: 'array', hlsName: 'string',
      cdnUrl: 'string', filePath: 'string', hlsPath: 'string' }, 'hls');
    expect(f.hls).toMatchObject({ destBucket: 'vod-media', mediaType: 'hls_master', hlsName: 'master.m3u8',
      cdnUrl: `${CDN}/cmaf/master.m3u8`, filePath: `vod/${GUID}/cmaf/master.m3u8`, hlsPath: `vod/${GUID}/cmaf` });
    expect(f.hls.guid).toMatch(UUID_RE);
    expect(f.hls.variants.map((v) => [v.width, v.height])).toEqual([[854, 480], [640, 360]]);
    for (const v of f.hls.variants) {
      expectShape(v, { path: 'string', bitRate: 'string', cdnUrl: 'string', filePath: 'string', width: 'number',
        height: 'number', mediaType: 'string' }, 'hls.variant');
      expect(v.mediaType).toBe(`hls_manifest_${v.height}_${v.bitRate}`);
      expect(Number(v.bitRate)).toBeGreaterThan(v.height === 480 ? 1_400_000 : 800_000);
      expect(v.cdnUrl).toBe(`${CDN}/cmaf/${v.path}`);
    }
  });

  it('builds the DASH part with integer bitrates from the MPD', () => {
    const d = records.formats.dash;
    expectShape(d, { destBucket: 'string', mediaType: 'string', guid: 'string', variants: 'array', cdnUrl: 'string',
      filePath: 'string', dashPath: 'string', dashName: 'string' }, 'dash');
    expect(d).toMatchObject({ mediaType: 'dash_manifest', cdnUrl: `${CDN}/cmaf/manifest.mpd`, dashName: 'manifest.mpd' });
    expect(d.variants.map((v) => [v.height, v.bitRate])).toEqual([[480, 1_400_000], [360, 800_000]]);
    for (const v of d.variants) {
      expectShape(v, { width: 'number', height: 'number', bitRate: 'number', mediaType: 'string', cdnUrl: 'string',
        filePath: 'string' }, 'dash.variant');
      expect(Number.isInteger(v.bitRate)).toBe(true);
      expect(v.mediaType).toBe(`dash_playlist_${v.height}_${v.bitRate}`);
    }
  });

  it('builds one MP4 record per height with size from disk and duration from ffprobe', async () => {
    const mp4 = records.formats.mp4;
    expect(mp4.map((m) => m.height)).toEqual([480, 360]);
    for (const m of mp4) {
      expectShape(m, { size: 'number', fileName: 'string', mediaType: 'string', guid: 'string', bitRate: 'number',
        width: 'number', height: 'number', cdnUrl: 'string', filePath: 'string', bucket: 'string', key: 'string',
        duration: 'number' }, 'mp4');
      expect(m.size).toBe((await stat(path.join(outDir, 'mp4', m.fileName))).size);
      expect(m).toMatchObject({ fileName: `${m.height}.mp4`, mediaType: `mp4_output_${m.height}`, bucket: 'vod-media',
        key: `vod/${GUID}/mp4/${m.height}.mp4`, cdnUrl: `${CDN}/mp4/${m.height}.mp4` });
      expect(m.duration).toBeGreaterThan(5.5);
      expect(m.duration).toBeLessThan(6.5);
      expect(m.bitRate).toBeGreaterThan(100_000);
    }
  });

  it('builds an HLS manifest record per variant with every segment field', () => {
    const keys = Object.keys(records.hlsManifests);
    expect(keys).toEqual(records.formats.hls.variants.map((v) => v.mediaType));
    for (const m of Object.values(records.hlsManifests)) {
      expectShape(m, { destBucket: 'string', fileName: 'string', mediaType: 'string', videoBitRate: 'number',
        segmentsInfo: 'object', cdnUrl: 'string', filePath: 'string', frameRate: 'number', guid: 'string', bitRate: 'number',
        width: 'number', height: 'number', averageBitrate: 'number', key: 'string', codecs: 'string' }, 'manifest');
      expect(m.frameRate).toBe(30);
      expect(m.codecs).toMatch(/^avc1\.[0-9a-f]{6},mp4a\.40\.2$/);
      expect(m.videoBitRate).toBe(m.height === 480 ? 1_400_000 : 800_000);
      const si = m.segmentsInfo;
      expectShape(si, { mediaTypeKey: 'string', hlsSegmentOffsets: 'array', segmentsCount: 'number', segments: 'array' }, 'si');
      expect(si.segmentsCount).toBe(2);
      expect(si.hlsSegmentOffsets).toEqual([0, 4]);
      si.segments.forEach((s, i) => {
        expectShape(s, { fileName: 'string', offset: 'number', destBucket: 'string', cdnUrl: 'string', filePath: 'string',
          mediaType: 'string', mediaSequence: 'number', duration: 'number', number: 'string', discontinuityStarts: 'array',
          bitRate: 'number', endList: 'boolean', guid: 'string', playlistType: 'string', timeline: 'number',
          targetDuration: 'number', discontinuitySequence: 'number', key: 'string', height: 'number' }, 'segment');
        expect(s).toMatchObject({ mediaType: `hls_segments_${i + 1}`, number: String(i + 1), mediaSequence: i + 1,
          playlistType: 'VOD', endList: true, targetDuration: 4, height: m.height, duration: i === 0 ? 4 : 2 });
        expect(s.guid).toMatch(UUID_RE);
      });
    }
  });

  it('builds HLS segment records mapping each variant to the same segment number', () => {
    expect(records.hlsSegments).toHaveLength(2);
    records.hlsSegments.forEach((r, i) => {
      expectShape(r, { destBucket: 'string', segments: 'object', mediaType: 'string', guid: 'string', playlistType: 'string',
        discontinuitySequence: 'number', offset: 'number', prefix: 'string', targetDuration: 'number', duration: 'number',
        isFirst: 'boolean', mediaSequence: 'number' }, 'hls segment record');
      expect(r).toMatchObject({ mediaType: `hls_segments_${i + 1}`, isFirst: i === 0, offset: i * 4, prefix: `${CDN}/cmaf/` });
      const labels = records.formats.hls.variants.map((v) => `${v.height}_${v.bitRate}`);
      expect(Object.keys(r.segments)).toEqual(labels);
      for (const u of Object.values(r.segments)) expect(u.startsWith(r.prefix)).toBe(true);
    });
  });

  it('builds DASH segment records with their initialization segment', () => {
    expect(Object.keys(records.dashSegments)).toEqual(records.formats.dash.variants.map((v) => v.mediaType));
    for (const [mt, segs] of Object.entries(records.dashSegments)) {
      expect(segs).toHaveLength(2);
      segs.forEach((s, i) => {
        expectShape(s, { destBucket: 'string', fileName: 'string', mediaType: 'string', initBucketPath: 'string',
          endList: 'boolean', cdnUrl: 'string', filePath: 'string', mediaSequence: 'number', initCdnUrl: 'string',
          guid: 'string', mapKey: 'string', number: 'number', initFilePath: 'string', programId: 'number', bitRate: 'number',
          width: 'number', height: 'number', targetDuration: 'number', duration: 'number', initFileName: 'string',
          codecs: 'string', timeline: 'number' }, 'dash segment');
        expect(s.mediaType).toBe(`${mt.replace('dash_playlist_', 'dash_segment_')}_${i + 1}`);
        expect(s.initCdnUrl).toBe(`${CDN}/cmaf/${s.initFileName}`);
        expect(s.initBucketPath).toBe(`vod-media/${s.initFilePath}`);
        expect(s.codecs).toMatch(/^avc1\./);
      });
    }
  });

  it('derives stable guids so reading the outputs twice gives the same records', async () => {
    const again = await buildRecords({ outDir, sourceGuid: GUID, cdnBase: CDN, destBucket: 'vod-media' });
    expect(again.ok && again.value).toEqual(records);
    expect(derivedGuid(GUID, 'x')).not.toBe(derivedGuid(GUID, 'y'));
  });

  it('fails with VOD_OUTPUT_INVALID on a directory that holds no encode', async () => {
    const r = await buildRecords({ outDir: path.join(outDir, 'mp4'), sourceGuid: GUID, cdnBase: CDN, destBucket: 'b' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('VOD_OUTPUT_INVALID');
  });
});
