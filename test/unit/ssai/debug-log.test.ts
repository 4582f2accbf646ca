import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { AvailRecord } from '../../../ssai/decide/avail-record.js';
import { outcomeOf } from '../../../ssai/decide/debug-decisions.js';
import { createSsaiMetrics } from '../../../ssai/metrics.js';
import { debugFlag } from '../../../ssai/serve/debug-route.js';
import { DebugLog, RAW_ANSWER_MAX_CHARS } from '../../../ssai/store/debug-log.js';
import { MemorySessionStore } from '../../../ssai/store/session-store.js';

const session = { id: 'sid-1', guid: 'guid-1', debug: true as const };
const logOf = (store = new MemorySessionStore(), maxEntries?: number) =>
  new DebugLog({ store, logger: pino({ level: 'silent' }), metrics: createSsaiMetrics(new Registry()), now: () => 1_000, ...(maxEntries ? { maxEntries } : {}) });

function record(over: Partial<AvailRecord>): AvailRecord {
  return { id: 'b1', index: 0, startSegmentIndex: 10, endSegmentIndex: 15, duration: 10, slotDuration: 2, ads: [], skipped: [], ...over };
}
const ad = (duration: number, slate = false) => ({ adId: slate ? 'slate' : 'ad', creativeId: 'c', duration, creativeKey: 'k', ...(slate ? { slate: true } : {}) });

describe('debug log', () => {
  it('keeps a raw answer up to its cap and says when it cut one', async () => {
    const log = logOf();
    log.adRequest(session, 'b1', { url: 'http://ads/x', ms: 3, status: 200, body: 'é'.repeat(RAW_ANSWER_MAX_CHARS + 10) });
    log.adRequest(session, 'b1', { url: 'http://ads/y', ms: 3, status: 200, body: '<VAST/>' });
    const [cut, whole] = (await log.read('guid-1', 'sid-1'))!;
    expect(cut).toMatchObject({ kind: 'ad-request', truncated: true, bytes: 2 * (RAW_ANSWER_MAX_CHARS + 10), at: 1_000 });
    expect((cut as { answer: string }).answer).toHaveLength(RAW_ANSWER_MAX_CHARS);
    expect(whole).toMatchObject({ answer: '<VAST/>', bytes: 7 });
    expect(whole).not.toHaveProperty('truncated');
  });

  it('writes each entry as a JSON log line marked debug, with its session, and counts it', async () => {
    const lines: string[] = [];
    const registry = new Registry();
    const log = new DebugLog({ store: new MemorySessionStore(), logger: pino({}, { write: (l: string) => { lines.push(l); } }), metrics: createSsaiMetrics(registry), now: () => 5 });
    log.decision(session, 'b1', 'content', 'ad-server-error', { error: 'http: ad server answered 500' });
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({
      debug: true, session: 'sid-1', guid: 'guid-1', msg: 'ssai debug: decision',
      entry: { at: 5, kind: 'decision', availId: 'b1', outcome: 'content', reason: 'ad-server-error', details: { error: 'http: ad server answered 500' } },
    })]);
    expect(await registry.metrics()).toContain('ssai_debug_entries_total{kind="decision"} 1');
  });

  it('keeps the newest entries past its cap, under its configuration and session only', async () => {
    const store = new MemorySessionStore();
    const log = logOf(store, 3);
    for (const availId of ['a', 'b', 'c', 'd', 'e']) log.decision(session, availId, 'content', 'empty');
    expect((await log.read('guid-1', 'sid-1'))!.map((e) => (e as { availId: string }).availId)).toEqual(['c', 'd', 'e']);
    expect(await log.read('guid-2', 'sid-1')).toBeUndefined();
    expect(await log.read('guid-1', 'sid-2')).toBeUndefined();
  });

  it('reads a decision from its record: filled, partly filled, slate or content, and why', () => {
    expect(outcomeOf(record({ ads: [ad(6), ad(4)] }))).toEqual({ outcome: 'filled' });
    expect(outcomeOf(record({ ads: [ad(6), ad(4, true)] }))).toEqual({ outcome: 'partly-filled', reason: 'short' });
    expect(outcomeOf(record({ ads: [ad(6)], skipped: [{ adId: 'x', reason: 'does not fit the avail' }] }))).toEqual({ outcome: 'partly-filled', reason: 'no-fit' });
    expect(outcomeOf(record({ ads: [ad(10, true)], skipped: [{ adId: 'x', reason: 'not prepared: queued for preparation' }] }))).toEqual({ outcome: 'slate', reason: 'unprepared-creative' });
    expect(outcomeOf(record({ error: 'late: the ad decision missed its deadline' }))).toEqual({ outcome: 'content', reason: 'late' });
    expect(outcomeOf(record({ error: 'empty: no linear ad in the response' }))).toEqual({ outcome: 'content', reason: 'empty' });
    expect(outcomeOf(record({ ads: [ad(10, true)], error: 'timeout: no answer in time' }))).toEqual({ outcome: 'slate', reason: 'ad-server-error' });
    // the policies of issue 31 name their reason the same way
    expect(outcomeOf(record({ error: 'suppressed: behind the live edge' }))).toEqual({ outcome: 'content', reason: 'suppressed' });
    // as the planner marks them: a suppressed break, a break the threshold left unpersonalised (its ads skipped)
    expect(outcomeOf(record({ unpersonalised: 'suppression' }))).toEqual({ outcome: 'content', reason: 'suppressed' });
    expect(outcomeOf(record({ unpersonalised: 'threshold', skipped: [{ adId: 'x', reason: 'the break is not personalised' }] }))).toEqual({ outcome: 'content', reason: 'threshold' });
    // a VOD insertion lasts as long as its ads
    expect(outcomeOf(record({ insert: true, duration: 6, ads: [ad(6)] }))).toEqual({ outcome: 'filled' });
  });

  it('takes 1, true, 0, false or nothing as the debug flag, and nothing else', () => {
    expect([debugFlag('1'), debugFlag('true'), debugFlag('0'), debugFlag('false'), debugFlag(undefined)]).toEqual([true, true, false, false, false]);
    for (const bad of ['', 'yes', 'TRUE', '01']) expect(debugFlag(bad)).toMatchObject({ code: 'BAD_DEBUG_FLAG', status: 400 });
  });
});
