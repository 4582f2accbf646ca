// Issue 32 item 4: Redis restarted, then PostgreSQL restarted, each while the whole load runs on the campaign cluster
// (test/faults/scenarios/store-restarts.ts, here at a small scale; bench/faults.ts runs it at full scale).
import { describe, expect, it } from 'vitest';
import { privateStoresMissing } from './private-stores.js';
import { storeRestartsReport } from './scenarios/store-restarts.js';

// In npm test again since stop 40 (opt-in before: one failure after 275 s in a full run, its reason unread; 275 s is
// about the first-ads wait of 240 s after the cluster's start, whose failure says what the cluster did meanwhile).
const missing = privateStoresMissing();
if (missing) process.stderr.write(`test/faults/stores-under-load: skipped: ${missing}\n`);

describe.skipIf(missing !== undefined)('the stores restarted under the whole load (private PostgreSQL and Redis)', () => {
  it('ends no process, keeps viewers and the channel playing, completes the encodes in flight once, delivers every notification once and loses no record', async () => {
    const report = await storeRestartsReport({ viewers: 6, outageSeconds: 4, recordsBefore: 5 });
    process.stderr.write(`stores under load: ${JSON.stringify(report.figures)}\n`); // the figures, for the docs' table
    expect(report.exited).toEqual([]);
    expect(report.unhandled).toEqual([]);
    // viewers' playlists, their ad segments and the channel's playlist answered every time (docs/store-outages.md);
    // the API alone answers 503 DATABASE_UNAVAILABLE while PostgreSQL is away
    expect(Object.entries(report.failures).filter(([key]) => !key.startsWith('api 503 during the PostgreSQL outage'))).toEqual([]);
    expect(report.figures.details.viewerRequestsFailed).toBe(0);
    // The one documented 503 (docs/store-outages.md), during the outage or until the engine is back on Redis: an ad
    // segment of a session this ssai process never saw (the balancer is round-robin); the player's retry reaches a
    // process that knows it.
    expect(Object.keys(report.retried).filter((key) => key !== 'segment 503 SESSION_STORE_UNAVAILABLE during the Redis outage'), report.retriedAt.join('\n')).toEqual([]);
    expect(report.channel.status).toBe('RUNNING');
    expect(report.channel.regressions).toBe(0);
    expect(report.channel.segmentAtEnd).toBeGreaterThan(report.channel.segmentAtRestart);
    expect(report.encodes.map((e) => [e.across, e.status, e.completionsLogged, e.notified])).toEqual([
      ['Redis', 'complete', 1, 1], ['PostgreSQL', 'complete', 1, 1],
    ]);
    expect(report.notifications.due).toBeGreaterThan(0);
    expect(report.notifications).toMatchObject({ pending: 0, missing: 0, doubled: 0 });
    expect(report.recordsMissing).toBe(0);
    expect(report.figures.recordsLost).toBe(0);
    expect(report.figures.recoverSeconds).not.toBeNull();
  }, 600_000);
});
