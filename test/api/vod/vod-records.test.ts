// Plain upload of a generated clip → encode → every record endpoint of spec 2.12, typed and true; media delivery.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from './helpers.js';

let engine: TestEngine;
let key: string;
let guid: string;
let info: any;
const dir = mkdtempSync(path.join(os.tmpdir(), 'vod-records-'));

const isStr = (v: unknown) => typeof v === 'string' && v.length > 0;
const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
function expectFields(obj: Record<string, unknown>, spec: Record<string, 'string' | 'number' | 'boolean' | 'array' | 'object' | 'url'>, where: string): void {
  for (const [field, type] of Object.entries(spec)) {
    const v = obj[field];
    const ok = type === 'string' ? isStr(v) : type === 'number' ? isNum(v) : type === 'boolean' ? typeof v === 'boolean'
      : type === 'array' ? Array.isArray(v) : type === 'url' ? isStr(v) && String(v).startsWith(`${engine.ctx.config.publicUrl}/media/vod/${guid}/`)
        : typeof v === 'object' && v !== null;
    expect(ok, `${where}.${field} should be a ${type}, got ${JSON.stringify(v)}`).toBe(true);
  }
}

beforeAll(async () => {
  engine = await startTestEngine();
  key = await apiKey(engine);
  const clip = await generateMedia('clip', path.join(dir, 'clip.mp4'), { seconds: 4, size: '640x360' });
  guid = await createMeta(engine, key, { title: 'Records clip', originalFileName: 'clip.mp4', genre: 'test' });
  const up = await uploadPlain(engine, key, guid, clip);
  expect(up.status, JSON.stringify(up.body)).toBe(200);
  expect(up.body.data.fileName).toMatch(/^[0-9a-f]{32}\.mp4$/);
  info = await waitForStatus(engine, guid, ['complete', 'error']);
}, 120_000);
afterAll(async () => engine?.close());

describe('VOD records after an encode', () => {
  it('reaches complete with progress 100 and an info record', async () => {
    expect(info.status, info.statusReason).toBe('complete');
    expectFields(info, { guid: 'string', mediaType: 'string', status: 'string', meta: 'object', thumbnail: 'url', hlsUrl: 'url', dashUrl: 'url', duration: 'number', createdAt: 'string' }, 'info');
    expect(info.progress).toMatchObject({ percent: 100, stage: 'done' });
    expect(info.meta).toMatchObject({ title: 'Records clip', genre: 'test', type: 'source' });
    expect(Math.abs(info.duration - 4)).toBeLessThanOrEqual(0.5);
  });

  it('counts the finished encode job in the Prometheus metrics', async () => {
    const text = (await engine.api('GET', '/metrics')).body as string;
    expect(text).toMatch(/engine_worker_jobs_total\{kind="encode",outcome="ok"\} 1/);
    expect(text).toMatch(/engine_worker_job_duration_seconds_count\{kind="encode"\} 1/);
  });

  it('lists it, filtered by status', async () => {
    const all = await engine.api('GET', '/broker/vod/list');
    expect(all.body.status).toBe(true);
    expect(all.body.data.map((d: { guid: string }) => d.guid)).toContain(guid);
    const complete = await engine.api('GET', '/broker/vod/list?status=complete');
    expect(complete.body.data.every((d: { status: string }) => d.status === 'complete')).toBe(true);
    expect(complete.body.data.map((d: { guid: string }) => d.guid)).toContain(guid);
    const errors = await engine.api('GET', '/broker/vod/list?status=error');
    expect(errors.body.data.map((d: { guid: string }) => d.guid)).not.toContain(guid);
    expect((await engine.api('GET', '/broker/vod/list?status=bogus')).status).toBe(400);
  });

  it('serves the formats record with every field of 2.12', async () => {
    const answer = await engine.api('GET', `/broker/vod/list/${guid}`);
    expect(answer.status).toBe(200);
    const d = answer.body.data;
    expect(d).toMatchObject({ hasHls: true, hasDash: true, hasMp4: true, hasThumbs: true });
    expectFields(d.hls, { destBucket: 'string', mediaType: 'string', guid: 'string', variants: 'array', hlsName: 'string', cdnUrl: 'url', filePath: 'string', hlsPath: 'string' }, 'hls');
    expect(d.hls.mediaType).toBe('hls_master');
    expect(d.hls.cdnUrl).toMatch(/\.m3u8$/);
    for (const v of d.hls.variants) {
      expectFields(v, { path: 'string', bitRate: 'string', cdnUrl: 'url', filePath: 'string', width: 'number', height: 'number', mediaType: 'string' }, 'hls.variant');
      expect(v.mediaType).toBe(`hls_manifest_${v.height}_${v.bitRate}`);
    }
    expectFields(d.dash, { destBucket: 'string', mediaType: 'string', guid: 'string', variants: 'array', cdnUrl: 'url', filePath: 'string', dashPath: 'string', dashName: 'string' }, 'dash');
    expect(d.dash.cdnUrl).toMatch(/\.mpd$/);
    for (const v of d.dash.variants) {
      expectFields(v, { width: 'number', height: 'number', bitRate: 'number', mediaType: 'string', cdnUrl: 'url', filePath: 'string' }, 'dash.variant');
      expect(v.mediaType).toBe(`dash_playlist_${v.height}_${v.bitRate}`);
    }
    expect(d.mp4.length).toBeGreaterThan(0);
    for (const m of d.mp4) {
      expectFields(m, { size: 'number', fileName: 'string', mediaType: 'string', guid: 'string', bitRate: 'number', width: 'number', height: 'number', cdnUrl: 'url', filePath: 'string', bucket: 'string', key: 'string', duration: 'number' }, 'mp4');
      expect(m.mediaType).toBe(`mp4_output_${m.height}`);
    }
  });

  it('serves the HLS manifest record with segmentsInfo', async () => {
    const formats = (await engine.api('GET', `/broker/vod/list/${guid}`)).body.data;
    for (const v of formats.hls.variants) {
      const answer = await engine.api('GET', `/broker/vod/list/${guid}/hls/${v.mediaType}`);
      expect(answer.status).toBe(200);
      const r = answer.body.data;
      expectFields(r, { destBucket: 'string', fileName: 'string', mediaType: 'string', videoBitRate: 'number', segmentsInfo: 'object', cdnUrl: 'url', filePath: 'string', frameRate: 'number', guid: 'string', bitRate: 'number', width: 'number', height: 'number', averageBitrate: 'number', key: 'string', codecs: 'string' }, 'manifest');
      expect(r.segmentsInfo.segmentsCount).toBe(r.segmentsInfo.segments.length);
      expect(r.segmentsInfo.hlsSegmentOffsets).toHaveLength(r.segmentsInfo.segmentsCount);
      expect(isStr(r.segmentsInfo.mediaTypeKey)).toBe(true);
      for (const s of r.segmentsInfo.segments) {
        expectFields(s, { fileName: 'string', offset: 'number', destBucket: 'string', cdnUrl: 'url', filePath: 'string', mediaType: 'string', mediaSequence: 'number', duration: 'number', number: 'string', discontinuityStarts: 'array', bitRate: 'number', endList: 'boolean', guid: 'string', playlistType: 'string', timeline: 'number', targetDuration: 'number', discontinuitySequence: 'number', key: 'string', height: 'number' }, 'segment');
        expect(s.mediaType).toMatch(/^hls_segments_\d+$/);
        expect(s.playlistType).toBe('VOD');
        expect(s.endList).toBe(true);
        const media = await fetch(s.cdnUrl, { method: 'HEAD' });
        expect(media.status).toBe(200);
        expect(media.headers.get('content-type')).toBe('video/iso.segment');
      }
    }
    expect((await engine.api('GET', `/broker/vod/list/${guid}/hls/hls_manifest_1_1`)).status).toBe(404);
  });

  it('serves the HLS and DASH segment records', async () => {
    const hls = await engine.api('GET', `/broker/vod/list/${guid}/hls/hls_segments/segments`);
    expect(hls.status).toBe(200);
    expect(hls.body.data.length).toBeGreaterThan(0);
    for (const s of hls.body.data) {
      expectFields(s, { destBucket: 'string', segments: 'object', mediaType: 'string', guid: 'string', playlistType: 'string', discontinuitySequence: 'number', offset: 'number', prefix: 'url', targetDuration: 'number', duration: 'number', isFirst: 'boolean', mediaSequence: 'number' }, 'hlsSegment');
      for (const [label, url] of Object.entries(s.segments)) {
        expect(label).toMatch(/^\d+_\d+$/);
        expect(String(url)).toContain(`/media/vod/${guid}/`);
      }
    }
    expect(hls.body.data[0].isFirst).toBe(true);
    const one = await engine.api('GET', `/broker/vod/list/${guid}/hls/${hls.body.data[0].mediaType}/segments`);
    expect(one.body.data).toHaveLength(1);

    const formats = (await engine.api('GET', `/broker/vod/list/${guid}`)).body.data;
    for (const v of formats.dash.variants) {
      const dash = await engine.api('GET', `/broker/vod/list/${guid}/dash/${v.mediaType}/segments`);
      expect(dash.status).toBe(200);
      expect(dash.body.status).toBe(true);
      for (const s of dash.body.data) {
        expectFields(s, { destBucket: 'string', fileName: 'string', mediaType: 'string', initBucketPath: 'string', endList: 'boolean', cdnUrl: 'url', filePath: 'string', mediaSequence: 'number', initCdnUrl: 'url', guid: 'string', mapKey: 'string', number: 'number', initFilePath: 'string', programId: 'number', bitRate: 'number', width: 'number', height: 'number', targetDuration: 'number', duration: 'number', initFileName: 'string', codecs: 'string', timeline: 'number' }, 'dashSegment');
        expect(s.mediaType).toBe(`dash_segment_${s.height}_${s.bitRate}_${s.number}`);
      }
    }
    expect((await engine.api('GET', `/broker/vod/list/${guid}/dash/dash_playlist_1_1/segments`)).status).toBe(404);
  });

  it('answers 404 for an unknown guid on every read endpoint', async () => {
    for (const p of ['/info', '', '/hls/hls_segments/segments', '/dash/dash_manifest/segments', '/hls/hls_manifest_360_1']) {
      const answer = await engine.api('GET', `/broker/vod/list/00000000-0000-4000-8000-000000000000${p}`);
      expect(answer.status, p).toBe(404);
      expect(answer.body).toMatchObject({ status: false, code: 'NOT_FOUND' });
    }
  });

  it('delivers media with content types, cache headers, ETag, ranges and CORS', async () => {
    const formats = (await engine.api('GET', `/broker/vod/list/${guid}`)).body.data;
    const master = await fetch(formats.hls.cdnUrl);
    expect(master.status).toBe(200);
    expect(master.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    expect(master.headers.get('cache-control')).toMatch(/max-age=\d{1,3}\b/);
    expect(master.headers.get('access-control-allow-origin')).toBe('*');
    expect(await master.text()).toContain('#EXT-X-STREAM-INF');
    const mpd = await fetch(formats.dash.cdnUrl);
    expect(mpd.headers.get('content-type')).toBe('application/dash+xml');
    const mp4 = formats.mp4[0];
    const head = await fetch(mp4.cdnUrl, { method: 'HEAD' });
    expect(head.headers.get('content-type')).toBe('video/mp4');
    expect(head.headers.get('cache-control')).toContain('immutable');
    expect(Number(head.headers.get('content-length'))).toBe(mp4.size);
    const etag = head.headers.get('etag')!;
    expect(etag).toBeTruthy();
    expect((await fetch(mp4.cdnUrl, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const part = await fetch(mp4.cdnUrl, { headers: { Range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${mp4.size}`);
    expect((await part.arrayBuffer()).byteLength).toBe(100);
    const beyond = await fetch(mp4.cdnUrl, { headers: { Range: `bytes=${mp4.size + 10}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${mp4.size}`);
    expect(await beyond.json()).toMatchObject({ status: false, code: 'RANGE_NOT_SATISFIABLE' });
    const info2 = (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body.data;
    const poster = await fetch(info2.thumbnail, { method: 'HEAD' });
    expect(poster.headers.get('content-type')).toBe('image/jpeg');
    const vtt = await fetch(info2.thumbnails.thumbsVttUrl, { method: 'HEAD' });
    expect(vtt.headers.get('content-type')).toMatch(/^text\/vtt/);
  });

  it('refuses path traversal out of the media store', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${engine.url}/media/vod/..%2f..%2fengine.sqlite`, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      req.on('error', reject);
      req.end();
    });
    expect([403, 404]).toContain(status);
    const raw = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: new URL(engine.url).port, path: '/media/../engine.sqlite' }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      req.on('error', reject);
      req.end();
    });
    expect([403, 404]).toContain(raw);
  });

  it('re-encodes on request and completes again with the same record shape', async () => {
    const before = (await engine.api('GET', `/broker/vod/list/${guid}`)).body.data.hls.cdnUrl;
    const answer = await engine.api('POST', `/broker/private/vod/encode/${guid}`, { headers: { 'X-Api-Key': key } });
    expect(answer.status).toBe(200);
    expect(answer.body.data.status).toBe('queued');
    const again = await engine.api('POST', `/broker/private/vod/encode/${guid}`, { headers: { 'X-Api-Key': key } });
    expect([200, 409]).toContain(again.status);
    const done = await waitForStatus(engine, guid, ['complete', 'error']);
    expect(done.status).toBe('complete');
    const after = (await engine.api('GET', `/broker/vod/list/${guid}`)).body.data.hls.cdnUrl;
    expect(after).not.toBe(before);
    expect((await fetch(after)).status).toBe(200);
    // The older version's files go right after the record moves on: waited for, not read the moment it is complete.
    let oldStatus = 0;
    for (let tries = 0; tries < 100 && oldStatus !== 404; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      oldStatus = (await fetch(before)).status;
    }
    expect(oldStatus).toBe(404);
  }, 90_000);
});
