import { afterEach, describe, expect, it, vi } from 'vitest';
import { Registry } from 'prom-client';
import type { AvailRecord, SessionRecord } from '../../../ssai/ad-planner.js';
import type { Avail } from '../../../ssai/cue-finder.js';
import { DecisionScheduler, type DecisionSchedulerDeps } from '../../../ssai/decision-scheduler.js';
import { createSsaiMetrics } from '../../../ssai/metrics.js';

const session = { id: 's1' } as SessionRecord;
const avail = { id: 'dr-1', startSegmentIndex: 20, slotDuration: 2 } as Avail;
const record = (error?: string): AvailRecord => ({ id: 'dr-1', index: 0, startSegmentIndex: 20, endSegmentIndex: 25, duration: 10, slotDuration: 2, ads: [], skipped: [], ...(error ? { error } : {}) });

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
  it('decides an announced break at a random moment of its lead less a margin of one target duration, once', async () => {
    vi.useFakeTimers();
    const done: AvailRecord[] = [];
    const { s, calls, metrics } = scheduler(async () => record(), { onEarly: (_task, r) => done.push(r) });
    s.ahead({ session, adServer: 'http://ads', avail, targetDuration: 2 }, 10_000);
    s.ahead({ session, adServer: 'http://ads', avail, targetDuration: 2 }, 10_000); // a reload meanwhile
    expect(s.isPending('s1', 'dr-1')).toBe(true);
    await vi.advanceTimersByTimeAsync(3999); // (10 s − 2 s) × 0.5
    expect(calls.decide).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.decide).toBe(1);
    expect(done).toHaveLength(1);
    expect(s.isPending('s1', 'dr-1')).toBe(false);
    expect((await metrics.decisionsEarly.get()).values[0]?.value).toBe(1);
  });

  it('runs many viewers\' early decisions in the order they fall due, under one timer and at most 256 at once', async () => {
    vi.useFakeTimers();
    const started: string[] = [];
    const finishers: Array<() => void> = [];
    let r = 0;
    const randoms = [0.9, 0.1, 0.5];
    const s = new DecisionScheduler({
      planner: {
        recordFor: (sess) => { started.push(sess.id); return new Promise<AvailRecord>((res) => finishers.push(() => res(record()))); },
        lateRecord: async () => record('late'),
      },
      metrics: createSsaiMetrics(new Registry()), now: () => Date.now(), random: () => randoms[r++ % 3]!, adaptive: false,
    });
    for (const id of ['late', 'early', 'middle']) s.ahead({ session: { id } as SessionRecord, adServer: 'x', avail, targetDuration: 2 }, 12_000);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toEqual(['early', 'middle', 'late']); // due at 1 s, 5 s, 9 s
    for (const f of finishers.splice(0)) f();
    await vi.advanceTimersByTimeAsync(0);
    // A burst: all due at once (no lead left), more than the bound.
    for (let i = 0; i < 300; i++) s.ahead({ session: { id: `b${i}` } as SessionRecord, adServer: 'x', avail, targetDuration: 2 }, 0);
    expect(started.length - 3).toBe(256);
    expect(s.isPending('b299', 'dr-1')).toBe(true);
    for (const f of finishers.splice(0, 10)) f();
    await vi.advanceTimersByTimeAsync(0);
    expect(started.length - 3).toBe(266);
    for (let k = 0; k < 5; k++) { for (const f of finishers.splice(0)) f(); await vi.advanceTimersByTimeAsync(0); }
    expect(started.length - 3).toBe(300);
    expect(s.isPending('b299', 'dr-1')).toBe(false);
    s.close();
  });

  it('lets fewer early decisions run while the event loop lags, and still runs them all', async () => {
    let running = 0;
    let finished = 0;
    const s = new DecisionScheduler({
      planner: {
        recordFor: () => { running++; return new Promise<AvailRecord>((res) => setTimeout(() => { running--; finished++; res(record()); }, 5)); },
        lateRecord: async () => record('late'),
      },
      metrics: createSsaiMetrics(new Registry()), now: () => Date.now(), random: () => 0,
    });
    // all due now, with 8 s of slack left
    for (let i = 0; i < 200; i++) s.ahead({ session: { id: `v${i}` } as SessionRecord, adServer: 'x', avail, targetDuration: 2 }, 10_000);
    expect(running).toBe(32);
    const until = performance.now() + 40;
    while (performance.now() < until); // the loop blocked: the probe fires 30 ms late
    await new Promise((r) => setTimeout(r, 15));
    expect(s.inFlightBound).toBeLessThan(32); // halved to 16, then +4 per calm probe
    for (let k = 0; k < 200 && finished < 200; k++) await new Promise((r) => setTimeout(r, 10));
    expect(finished).toBe(200);
    s.close();
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

  it('starts decisions with no slack left past the adaptive bound (up to 256)', async () => {
    const finishers: Array<() => void> = [];
    const { s, calls } = scheduler(() => new Promise<AvailRecord>((r) => finishers.push(() => r(record()))));
    for (let i = 0; i < 300; i++) s.ahead({ session: { id: `n${i}` } as SessionRecord, adServer: 'x', avail, targetDuration: 2 }, 1000);
    expect(calls.decide).toBe(256); // a lead shorter than the margin: no slack, past the starting bound of 32
    for (const f of finishers.splice(0)) f();
    await new Promise((r) => setTimeout(r, 0));
    expect(calls.decide).toBe(300);
    for (const f of finishers.splice(0)) f();
    s.close();
  });

  it('gives the late record at once, without deciding, past its bound of decisions of breaks in the window', async () => {
    const finishers: Array<() => void> = [];
    const { s, calls } = scheduler(() => new Promise<AvailRecord>((r) => finishers.push(() => r(record()))), { deadlineMs: 60_000, maxInWindow: 64 });
    const waiting = Array.from({ length: 70 }, (_, i) => s.inWindow({ session: { id: `j${i}` } as SessionRecord, adServer: 'x', avail, targetDuration: 2 }));
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toEqual({ decide: 64, late: 6 });
    for (const f of finishers.splice(0)) f();
    const got = await Promise.all(waiting);
    expect(got.filter((r) => r.error === 'late')).toHaveLength(6);
    const again = s.inWindow({ session, adServer: 'x', avail, targetDuration: 2 });
    await new Promise((r) => setTimeout(r, 0));
    expect(calls.decide).toBe(65); // the bound is free again
    for (const f of finishers.splice(0)) f();
    expect((await again).error).toBeUndefined();
  });
});
