import { afterEach, describe, expect, it, vi } from 'vitest';
import { Registry } from 'prom-client';
import type { AvailRecord, SessionRecord } from '../../../ssai/ad-planner.js';
import type { Avail } from '../../../ssai/cue-finder.js';
import { DecisionScheduler, type DecisionSchedulerDeps } from '../../../ssai/decision-scheduler.js';
import { createSsaiMetrics } from '../../../ssai/metrics.js';

const session = { id: 's1' } as SessionRecord;
const avail = { id: 'dr-1', startSegmentIndex: 20, slotDuration: 2 } as Avail;
const record = (error?: string): AvailRecord => ({ id: 'dr-1', index: 0, startSegmentIndex: 20, endSegmentIndex: 25, duration: 10, slotDuration: 2, ads: [], skipped: [], decidedAt: 0, ...(error ? { error } : {}) });

function scheduler(decide: () => Promise<AvailRecord>, opts: Partial<DecisionSchedulerDeps> = {}) {
  const calls = { decide: 0, late: 0 };
  const metrics = createSsaiMetrics(new Registry());
  const s = new DecisionScheduler({
    planner: { recordFor: () => { calls.decide++; return decide(); }, lateRecord: async () => { calls.late++; return record('late'); } },
    metrics, now: () => Date.now(), random: () => 0.5, ...opts,
  });
  return { s, calls, metrics };
}

afterEach(() => { vi.useRealTimers(); });

describe('decision scheduler', () => {
  it('decides an announced break at a random moment of its lead less a margin of two target durations, once', async () => {
    vi.useFakeTimers();
    const { s, calls, metrics } = scheduler(async () => record());
    const done: AvailRecord[] = [];
    s.ahead({ session, adServer: 'http://ads', avail, targetDuration: 2 }, 10_000, (r) => done.push(r));
    s.ahead({ session, adServer: 'http://ads', avail, targetDuration: 2 }, 10_000, (r) => done.push(r)); // a reload meanwhile
    expect(s.isPending('s1', 'dr-1')).toBe(true);
    await vi.advanceTimersByTimeAsync(2999); // (10 s − 4 s) × 0.5
    expect(calls.decide).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.decide).toBe(1);
    expect(done).toHaveLength(1);
    expect(s.isPending('s1', 'dr-1')).toBe(false);
    expect((await metrics.decisionsEarly.get()).values[0]?.value).toBe(1);
  });

  it('gives a break in the window its decision, or past the deadline the late record while the decision goes on', async () => {
    const quick = scheduler(async () => record(), { deadlineMs: 50 });
    expect((await quick.s.inWindow({ session, adServer: 'x', avail, targetDuration: 2 })).error).toBeUndefined();
    let finish: (r: AvailRecord) => void = () => undefined;
    const slow = scheduler(() => new Promise<AvailRecord>((r) => { finish = r; }), { deadlineMs: 20 });
    const got = await slow.s.inWindow({ session, adServer: 'x', avail, targetDuration: 2 });
    expect(got.error).toBe('late');
    expect(slow.calls).toEqual({ decide: 1, late: 1 });
    expect((await slow.metrics.decisionsLate.get()).values[0]?.value).toBe(1);
    finish(record());
  });
});
