// DatabaseEncodeQueue.waitFor leaves nothing behind once it returns or times out: no polling loop, no waiter.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../kernel/core/logger.js';
import { openStore, type Store } from '../../../kernel/store/database.js';
import { DatabaseEncodeQueue } from '../../../vod-encoder/queue-db.js';

const stores: Store[] = [];
afterAll(async () => { for (const s of stores) await s.close(); });

describe('database queue waitFor', () => {
  it('stops polling and forgets its waiter after a timeout', async () => {
    const store = await openStore({ dataDir: mkdtempSync(path.join(os.tmpdir(), 'queue-wait-')) });
    stores.push(store);
    const queue = new DatabaseEncodeQueue({ db: store.db, logger: createLogger('silent') });
    const id = await queue.enqueue('encode', {}); // no handler: the job stays queued
    await expect(queue.waitFor(id, 100)).rejects.toThrow(/did not finish/);
    let reads = 0;
    const get = queue.get.bind(queue);
    queue.get = async (jobId: string) => { reads++; return get(jobId); };
    await new Promise((r) => setTimeout(r, 1200));
    expect(reads).toBe(0);
    expect((queue as unknown as { waiters: Map<string, unknown> }).waiters.size).toBe(0);
    await queue.close();
  });
});
