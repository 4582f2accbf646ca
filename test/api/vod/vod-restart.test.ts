// Closing the engine in the middle of an encode and starting it again on the same DATA_DIR finishes the job.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from './helpers.js';

const engines: TestEngine[] = [];
afterAll(async () => { for (const e of engines) await e.close(); });

describe('encode across a restart', () => {
  it('re-queues a job left running and completes it after the restart', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vod-restart-'));
    const clip = await generateMedia('clip', path.join(dataDir, 'clip.mp4'), { seconds: 6, size: '640x360' });
    const first = await startTestEngine({ dataDir });
    engines.push(first);
    const key = await apiKey(first);
    const guid = await createMeta(first, key, { title: 'restart' });
    expect((await uploadPlain(first, key, guid, clip)).status).toBe(200);
    // Wait until ffmpeg runs, then close the engine under it.
    await waitForStatus(first, guid, ['encoding'], 30_000);
    await first.close();

    const db = new BetterSqlite3(path.join(dataDir, 'engine.sqlite'), { readonly: true });
    const job = db.prepare("select state from encode_jobs where kind = 'encode'").get() as { state: string };
    const vod = db.prepare('select status, records from vod_sources where id = ?').get(guid) as { status: string; records: string | null };
    db.close();
    expect(job.state).toBe('running');
    expect(vod.status).toBe('encoding');
    expect(vod.records).toBeNull();

    const second = await startTestEngine({ dataDir });
    engines.push(second);
    const done = await waitForStatus(second, guid, ['complete', 'error'], 60_000);
    expect(done.status, done.statusReason).toBe('complete');
    expect((await fetch(done.hlsUrl)).status).toBe(200);
  }, 120_000);
});
