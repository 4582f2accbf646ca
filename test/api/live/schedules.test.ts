import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { ENGINE_PARTS } from '../../../wiring/parts.js';
import type { EnginePart } from '../../../kernel/part.js';
import { Scheduler } from '../../../src/schedules/scheduler.js';
import { DIALECTS, postgresAvailable, startTestEngine, type DialectChoice, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live, RuntimeDouble } from './live-helpers.js';

/** The engine's parts with a runtime double registered first, so start-up catch-up already has a runtime. */
function partsWith(runtime: RuntimeDouble): EnginePart[] {
  // last, so the double replaces the packager's runtime
  return [...ENGINE_PARTS, { name: 'runtime-double', roles: ['api'], init: (ctx) => { ctx.services.channelRuntime = runtime; } }];
}

/** A live API key: ID tokens expire after an hour and these tests move the clock by days. */
async function apiKeyAuth(engine: TestEngine): Promise<Record<string, string>> {
  const token = (await engine.login()).IdToken;
  const key = await engine.api('POST', '/api-keys', { headers: { Authorization: token }, body: { name: 'scheduler tests' } });
  return { 'X-Api-Key': key.body.value as string };
}

async function tickAndSettle(engine: TestEngine): Promise<void> {
  await live(engine).scheduler.tick();
  await live(engine).channels.settled();
}

describe('schedules driven by a manual clock', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const clock = new ManualClock('2026-03-02T09:00:00Z'); // a Monday

  beforeAll(async () => {
    engine = await startTestEngine({ clock, parts: partsWith(new RuntimeDouble()) });
    auth = await apiKeyAuth(engine);
  });
  afterAll(async () => engine?.close());

  const create = async (schedule: Record<string, unknown>) =>
    (await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('srt-push'), name: 'Scheduled', schedule } })).body.id as string;
  const status = async (id: string) => (await engine.api('GET', `/workflows/${id}`, { headers: auth })).body.status as string;
  const copiesOf = async (id: string) =>
    (await engine.api('GET', '/workflows', { headers: auth })).body.items.filter((w: { sourceWorkflowId?: string }) => w.sourceWorkflowId === id) as Array<{ id: string; status: string }>;

  it('starts shift minutes before startDateTime and stops after duration', async () => {
    clock.set('2026-03-02T09:00:00Z');
    const id = await create({ startDateTime: '2026-03-02T10:00:00Z', startDateTimeShiftMinutes: 5, duration: 30 });
    clock.set('2026-03-02T09:54:59Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('READY');
    clock.set('2026-03-02T09:55:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('RUNNING');
    clock.set('2026-03-02T10:29:59Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('RUNNING');
    clock.set('2026-03-02T10:30:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('DONE');
    clock.set('2026-03-03T10:00:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('DONE');
    expect(await copiesOf(id)).toEqual([]);
  });

  it('stops at stopDateTime', async () => {
    clock.set('2026-03-02T11:00:00Z');
    const id = await create({ startDateTime: '2026-03-02T11:10:00Z', stopDateTime: '2026-03-02T11:20:00Z' });
    clock.set('2026-03-02T11:10:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('RUNNING');
    clock.set('2026-03-02T11:20:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('DONE');
  });

  it('repeats every day until endDate inclusive, starting a copy of the finished workflow each day', async () => {
    clock.set('2026-03-02T12:00:00Z');
    const id = await create({ startDateTime: '2026-03-02T18:00:00Z', duration: 60, recurrence: { unit: 'DAY', endDate: '2026-03-03' } });
    for (const day of ['02', '03', '04']) {
      clock.set(`2026-03-${day}T18:00:00Z`);
      await tickAndSettle(engine);
      clock.set(`2026-03-${day}T19:00:00Z`);
      await tickAndSettle(engine);
    }
    expect(await status(id)).toBe('DONE');
    const copies = await copiesOf(id);
    expect(copies.map((c) => c.status)).toEqual(['DONE']);
  });

  it('stops a run whose stop was missed and starts the next run on the following pass', async () => {
    clock.set('2026-03-05T06:00:00Z');
    const id = await create({ startDateTime: '2026-03-05T07:00:00Z', duration: 60, recurrence: { unit: 'DAY' } });
    clock.set('2026-03-05T07:00:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('RUNNING');
    clock.set('2026-03-06T07:30:00Z'); // the 08:00 stop of yesterday was missed; today's run is on
    await tickAndSettle(engine);
    expect(await status(id)).toBe('DONE');
    await tickAndSettle(engine);
    expect((await copiesOf(id)).map((c) => c.status)).toEqual(['RUNNING']);
  });

  it('repeats on the given week days only', async () => {
    clock.set('2026-03-02T20:00:00Z');
    const id = await create({ startDateTime: '2026-03-02T21:00:00Z', duration: 30, recurrence: { unit: 'WEEK', days: ['WED'] } });
    clock.set('2026-03-02T21:00:00Z'); // Monday: not a run day
    await tickAndSettle(engine);
    expect(await status(id)).toBe('READY');
    clock.set('2026-03-03T21:00:00Z'); // Tuesday
    await tickAndSettle(engine);
    expect(await status(id)).toBe('READY');
    clock.set('2026-03-04T21:05:00Z'); // Wednesday, 5 minutes late: the run is still on
    await tickAndSettle(engine);
    expect(await status(id)).toBe('RUNNING');
    clock.set('2026-03-04T21:30:00Z');
    await tickAndSettle(engine);
    expect(await status(id)).toBe('DONE');
  });

  it('lets one scheduler hold the cluster lock until it expires', async () => {
    const { workflows, channels } = live(engine);
    const other = new Scheduler(engine.ctx, workflows, channels);
    const now = clock.nowMs();
    expect(await live(engine).scheduler.acquire(now)).toBe(true);
    expect(await other.acquire(now + 1000)).toBe(false);
    expect(await other.acquire(now + 61_000)).toBe(true);
    expect(await live(engine).scheduler.acquire(now + 62_000)).toBe(false);
    await other.stop();
    expect(await live(engine).scheduler.acquire(now + 63_000)).toBe(true);
  });
});

describe.each(DIALECTS)('restart on %s', (dialect: DialectChoice) => {
  let skip = false;
  beforeAll(async () => {
    skip = dialect === 'postgres' && !(await postgresAvailable());
  });

  it('keeps workflows, channels and schedules, and catches up a run due during the downtime', async ({ skip: skipTest }) => {
    if (skip) return skipTest();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-live-'));
    const schema = dialect === 'postgres' ? `t_live_${randomBytes(5).toString('hex')}` : undefined;
    const clock = new ManualClock('2026-03-02T10:00:00Z');
    const options = { dialect, dataDir, clock, ...(schema ? { schema } : {}) };
    let engine = await startTestEngine({ ...options, parts: partsWith(new RuntimeDouble()) });
    let auth = await apiKeyAuth(engine);
    const create = async (name: string, schedule?: Record<string, unknown>) =>
      (await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name, ...(schedule ? { schedule } : {}) } })).body.id as string;
    const running = await create('Running before');
    await engine.api('POST', '/channels', { headers: auth, body: { workflows: [running] } });
    await live(engine).channels.settled();
    const catchUp = await create('Due in downtime', { startDateTime: '2026-03-02T12:00:00Z', duration: 60 });
    const missed = await create('Over in downtime', { startDateTime: '2026-03-02T11:00:00Z', duration: 30 });
    const later = await create('Later', { startDateTime: '2026-03-02T15:00:00Z', duration: 30 });
    const before = (await engine.api('GET', `/channels/${running}`, { headers: auth })).body;
    await engine.close();

    clock.set('2026-03-02T12:20:00Z');
    engine = await startTestEngine({ ...options, parts: partsWith(new RuntimeDouble()) });
    auth = await apiKeyAuth(engine);
    await live(engine).channels.settled();
    const read = async (id: string) => (await engine.api('GET', `/workflows/${id}`, { headers: auth })).body;
    expect((await read(catchUp)).status).toBe('RUNNING');
    expect((await read(missed)).status).toBe('READY');
    expect(await read(later)).toMatchObject({ status: 'READY', schedule: { startDateTime: '2026-03-02T15:00:00Z', duration: 30 } });
    expect((await engine.api('GET', `/channels/${running}`, { headers: auth })).body).toEqual(before);

    clock.set('2026-03-02T13:00:00Z');
    await tickAndSettle(engine);
    expect((await read(catchUp)).status).toBe('DONE');
    clock.set('2026-03-02T15:00:00Z');
    await tickAndSettle(engine);
    expect((await read(later)).status).toBe('RUNNING');
    await engine.close();
  });
});
