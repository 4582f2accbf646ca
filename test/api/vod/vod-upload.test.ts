// tus resumable upload (a tiny tus client: POST create + PATCH in two chunks), encode false → Encode-later → encode;
// bad input: a text file and a truncated MP4 end in status error with a reason.
import { mkdtempSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from './helpers.js';

let engine: TestEngine;
let key: string;
const dir = mkdtempSync(path.join(os.tmpdir(), 'vod-upload-'));
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Minimal tus 1.0 client: creation, then PATCH chunks; returns the upload URL. */
async function tusUpload(endpoint: string, headers: Record<string, string>, bytes: Buffer, metadata: Record<string, string>, chunk = 64 * 1024) {
  const create = await fetch(endpoint, {
    method: 'POST',
    headers: { ...headers, 'Tus-Resumable': '1.0.0', 'Upload-Length': String(bytes.length),
      'Upload-Metadata': Object.entries(metadata).map(([k, v]) => `${k} ${b64(v)}`).join(',') },
  });
  if (create.status !== 201) return { status: create.status, body: await create.text(), location: undefined };
  const location = create.headers.get('location')!;
  let offset = 0;
  while (offset < bytes.length) {
    const part = bytes.subarray(offset, offset + chunk);
    const patch = await fetch(location, {
      method: 'PATCH',
      headers: { ...headers, 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
      body: new Uint8Array(part),
    });
    if (patch.status !== 204) return { status: patch.status, body: await patch.text(), location };
    offset = Number(patch.headers.get('upload-offset'));
    // Resumability: HEAD reports the same offset.
    const head = await fetch(location, { method: 'HEAD', headers: { ...headers, 'Tus-Resumable': '1.0.0' } });
    expect(Number(head.headers.get('upload-offset'))).toBe(offset);
  }
  return { status: 204, body: '', location };
}

beforeAll(async () => {
  engine = await startTestEngine();
  key = await apiKey(engine);
});
afterAll(async () => engine?.close());

describe('VOD uploads', () => {
  it('takes a tus upload linked by x-engine-meta-metaguid, keeps it in Encode-later, then encodes it on request', async () => {
    const clip = await generateMedia('clip', path.join(dir, 'tus.mp4'), { seconds: 2, size: '320x180' });
    const guid = await createMeta(engine, key, { encode: false, title: 'tus clip' });
    const settings = (await engine.api('GET', '/broker/private/upload-multipart', { headers: { 'X-Api-Key': key } })).body.data;
    const result = await tusUpload(settings.identityPoolId, { 'X-Api-Key': key }, await readFile(clip),
      { 'x-engine-meta-metaguid': guid, filename: 'My Holiday.MP4', filetype: 'video/mp4' });
    expect(result.status, result.body).toBe(204);
    const stored = path.basename(new URL(result.location!).pathname);
    expect(stored).toMatch(/^[0-9a-f]{32}\.mp4$/);
    expect(await readdir(path.join(engine.dataDir, 'uploads'))).toContain(stored);
    const later = await waitForStatus(engine, guid, ['Encode-later', 'queued', 'encoding', 'complete', 'error']);
    expect(later.status).toBe('Encode-later');
    expect(later.originalFileName).toBe('My Holiday.MP4');
    const listed = await engine.api('GET', '/broker/vod/list?status=Encode-later');
    expect(listed.body.data.map((d: { guid: string }) => d.guid)).toContain(guid);
    const encode = await engine.api('POST', `/broker/private/vod/encode/${guid}`, { headers: { 'X-Api-Key': key } });
    expect(encode.status).toBe(200);
    const done = await waitForStatus(engine, guid, ['complete', 'error']);
    expect(done.status, done.statusReason).toBe('complete');
  }, 60_000);

  it('refuses a tus upload without or with an unknown metaguid, and without credentials', async () => {
    const endpoint = `${engine.url}/broker/private/upload`;
    const none = await tusUpload(endpoint, { 'X-Api-Key': key }, Buffer.from('abc'), { filename: 'a.mp4' });
    expect(none.status).toBe(400);
    const unknown = await tusUpload(endpoint, { 'X-Api-Key': key }, Buffer.from('abc'), { 'x-engine-meta-metaguid': 'nope', filename: 'a.mp4' });
    expect(unknown.status).toBe(404);
    const anonymous = await tusUpload(endpoint, {}, Buffer.from('abc'), { 'x-engine-meta-metaguid': 'nope' });
    expect(anonymous.status).toBe(401);
    const token = (await engine.login()).IdToken;
    const guid = await createMeta(engine, key, { encode: false });
    const viaToken = await tusUpload(`${engine.url}/broker/upload`, { Authorization: token }, Buffer.from('abc'), { 'x-engine-meta-metaguid': guid, filename: 'a.mp4' });
    expect(viaToken.status).toBe(204);
    expect(viaToken.location).toContain('/broker/upload/');
  });

  it('ends a text file uploaded as video in status error with the reason', async () => {
    const text = await generateMedia('text', path.join(dir, 'fake.mp4'));
    const guid = await createMeta(engine, key);
    expect((await uploadPlain(engine, key, guid, text, 'video/mp4', 'fake.mp4')).status).toBe(200);
    const done = await waitForStatus(engine, guid, ['complete', 'error']);
    expect(done.status).toBe('error');
    expect(done.statusReason).toMatch(/^The file is not a playable media file \((moov atom not found|Invalid data found when processing input)\)$/);
    // the open info path shows no server path, no command line
    const open = await fetch(`${engine.url}/broker/vod/list/${guid}/info`);
    expect(open.status).toBe(200);
    const info = JSON.stringify(await open.json());
    expect(info).not.toContain(engine.dataDir);
    expect(info).not.toMatch(/ffprobe|Command failed|uploads\//);
    expect(done.hlsUrl).toBeNull();
    expect((await engine.api('GET', `/broker/vod/list/${guid}`)).status).toBe(404);
    const errors = await engine.api('GET', '/broker/vod/list?status=error');
    expect(errors.body.data.map((d: { guid: string }) => d.guid)).toContain(guid);
  });

  it('ends a truncated MP4 in status error with the reason and no record', async () => {
    const truncated = await generateMedia('truncated', path.join(dir, 'truncated.mp4'));
    const guid = await createMeta(engine, key);
    expect((await uploadPlain(engine, key, guid, truncated, 'application/octet-stream', 'truncated.mp4')).status).toBe(200);
    const done = await waitForStatus(engine, guid, ['complete', 'error']);
    expect(done.status).toBe('error');
    expect(done.statusReason.length).toBeGreaterThan(10);
    expect((await engine.api('GET', `/broker/vod/list/${guid}`)).status).toBe(404);
    expect(await readdir(path.join(engine.dataDir, 'media', 'vod', guid)).catch(() => [])).toEqual([]);
  });
});
