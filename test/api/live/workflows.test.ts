import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live, RuntimeDouble } from './live-helpers.js';

describe('workflows', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const blueprint = catalogBlueprint('rtmp-push-abr');
  const valid = { blueprint, name: 'Morning show', description: 'Daily news v1.0', region: 'eu-west', tags: ['News', 'Morning'] };

  beforeAll(async () => {
    engine = await startTestEngine({ env: { ENGINE_REGIONS: 'eu-west,us-east' } });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  const create = async (body: Record<string, unknown>) => engine.api('POST', '/workflows', { headers: auth, body });
  const count = async () => (await engine.api('GET', '/workflows', { headers: auth })).body.items.length as number;

  it('creates a workflow from a complete blueprint and reads it back', async () => {
    const created = await create({ ...valid, inputWhitelistCIDRs: ['203.0.113.0/24', '2001:db8::/32'], subscriptions: [{ protocol: 'https', endpoint: 'https://ops.example.test/hook' }] });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id']);
    const read = await engine.api('GET', `/workflows/${created.body.id}`, { headers: auth });
    expect(read.body).toMatchObject({ id: created.body.id, name: 'Morning show', status: 'READY', statusReason: null, blueprintId: 'rtmp-push-abr', region: 'eu-west', tags: ['News', 'Morning'] });
    expect(read.body.created).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(read.body.blueprint.components.encoder.input.type).toBe('RTMP_PUSH');
  });

  it('uses the default region when none is given', async () => {
    const created = await create({ blueprint, name: 'No region' });
    expect((await engine.api('GET', `/workflows/${created.body.id}`, { headers: auth })).body.region).toBe('eu-west');
  });

  const badBodies: Array<[string, Record<string, unknown>, string]> = [
    ['a missing name', { blueprint }, 'name'],
    ['a missing blueprint', { name: 'x' }, 'blueprint'],
    ['a blueprint that is not blueprint-shaped', { name: 'x', blueprint: { hello: 1 } }, 'blueprint.components'],
    ['a blueprint with two channel sections', { name: 'x', blueprint: { components: { a: (blueprint.components as Record<string, unknown>).encoder, b: (blueprint.components as Record<string, unknown>).encoder } } }, 'blueprint.components'],
    ['an ad server naming no destination', { name: 'x', blueprint: { ...blueprint, settings: { adServers: [{ destinationRefId: 'nope', adServerId: 'g' }] } } }, 'blueprint.settings.adServers.0.destinationRefId'],
    ['a name with a slash', { ...valid, name: 'a/b' }, 'name'],
    ['a name of 129 characters', { ...valid, name: 'a'.repeat(129) }, 'name'],
    ['an empty name', { ...valid, name: '' }, 'name'],
    ['a description with a <', { ...valid, description: '<script>' }, 'description'],
    ['an unknown region', { ...valid, region: 'mars-1' }, 'region'],
    ['a bad CIDR', { ...valid, inputWhitelistCIDRs: ['10.0.0.0/33'] }, 'inputWhitelistCIDRs.0'],
    ['an address without a prefix', { ...valid, inputWhitelistCIDRs: ['10.0.0.1'] }, 'inputWhitelistCIDRs.0'],
    ['a schedule duration of 4 minutes', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', duration: 4 } }, 'schedule.duration'],
    ['a schedule duration of 721 minutes', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', duration: 721 } }, 'schedule.duration'],
    ['a schedule without startDateTime', { ...valid, schedule: { duration: 30 } }, 'schedule.startDateTime'],
    ['a startDateTime that is not a date-time', { ...valid, schedule: { startDateTime: 'tomorrow' } }, 'schedule.startDateTime'],
    ['a stopDateTime before the start', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', stopDateTime: '2026-02-01T09:00:00Z' } }, 'schedule.stopDateTime'],
    ['a negative shift', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', startDateTimeShiftMinutes: -5 } }, 'schedule.startDateTimeShiftMinutes'],
    ['a WEEK recurrence without days', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', recurrence: { unit: 'WEEK' } } }, 'schedule.recurrence.days'],
    ['an unknown day code', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', recurrence: { unit: 'WEEK', days: ['MONDAY'] } } }, 'schedule.recurrence.days.0'],
    ['an unknown recurrence unit', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', recurrence: { unit: 'MONTH' } } }, 'schedule.recurrence.unit'],
    ['an endDate with a time', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', recurrence: { unit: 'DAY', endDate: '2026-02-05T00:00:00Z' } } }, 'schedule.recurrence.endDate'],
    ['an endDate before the start', { ...valid, schedule: { startDateTime: '2026-02-01T10:00:00Z', recurrence: { unit: 'DAY', endDate: '2026-01-05' } } }, 'schedule.recurrence.endDate'],
    ['tags that are not strings', { ...valid, tags: [1] }, 'tags.0'],
    ['an unknown field', { ...valid, colour: 'red' }, 'body'],
  ];

  it.each(badBodies)('refuses %s with 400 VALIDATION_FAILED naming the field, storing nothing', async (_label, body, field) => {
    const before = await count();
    const answer = await create(body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('VALIDATION_FAILED');
    expect(answer.body.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(await count()).toBe(before);
  });

  it('filters by tags (all, case-insensitive) and statuses (any) and sorts by date', async () => {
    const tagged = await engine.api('GET', '/workflows?tags=news,MORNING', { headers: auth });
    expect(tagged.body.items.length).toBeGreaterThan(0);
    expect(tagged.body.items.every((w: { tags: string[] }) => w.tags.includes('News'))).toBe(true);
    expect((await engine.api('GET', '/workflows?tags=news,evening', { headers: auth })).body.items).toEqual([]);
    expect((await engine.api('GET', '/workflows?status=RUNNING,DONE', { headers: auth })).body.items).toEqual([]);
    const ready = (await engine.api('GET', '/workflows?status=ready', { headers: auth })).body.items;
    expect(ready.length).toBe(await count());
    const desc = ready.map((w: { created: string }) => w.created);
    expect([...desc].sort().reverse()).toEqual(desc);
    const asc = (await engine.api('GET', '/workflows?sort=asc', { headers: auth })).body.items.map((w: { created: string }) => w.created);
    expect([...asc].sort()).toEqual(asc);
    expect((await engine.api('GET', '/workflows?status=BOGUS', { headers: auth })).body.code).toBe('VALIDATION_FAILED');
    expect((await engine.api('GET', '/workflows?sort=up', { headers: auth })).body.code).toBe('VALIDATION_FAILED');
  });

  it('updates and deletes an unlocked workflow; another id answers 404', async () => {
    const { body } = await create(valid);
    const updated = await engine.api('PUT', `/workflows/${body.id}`, { headers: auth, body: { ...valid, name: 'Evening show', region: 'us-east' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Evening show', region: 'us-east' });
    const bad = await engine.api('PUT', `/workflows/${body.id}`, { headers: auth, body: { ...valid, region: 'nowhere' } });
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    expect((await engine.api('GET', `/workflows/${body.id}`, { headers: auth })).body.region).toBe('us-east');
    expect((await engine.api('DELETE', `/workflows/${body.id}`, { headers: auth })).body).toEqual({ id: body.id, status: 'DELETED' });
    expect((await engine.api('GET', `/workflows/${body.id}`, { headers: auth })).status).toBe(404);
    expect((await engine.api('PUT', `/workflows/${body.id}`, { headers: auth, body: valid })).status).toBe(404);
    expect((await engine.api('DELETE', `/workflows/${body.id}`, { headers: auth })).status).toBe(404);
  });

  it('refuses update and delete while the workflow is locked (STARTING) with 409 WORKFLOW_LOCKED', async () => {
    const runtime = new RuntimeDouble();
    runtime.holdStarts = true;
    engine.ctx.services.channelRuntime = runtime;
    try {
      const { body } = await create(valid);
      expect((await engine.api('POST', '/channels', { headers: auth, body: { workflows: [body.id] } })).status).toBe(200);
      await expect.poll(async () => (await engine.api('GET', `/workflows/${body.id}`, { headers: auth })).body.status).toBe('STARTING');
      const put = await engine.api('PUT', `/workflows/${body.id}`, { headers: auth, body: { ...valid, name: 'Changed' } });
      expect(put.status).toBe(409);
      expect(put.body.code).toBe('WORKFLOW_LOCKED');
      const del = await engine.api('DELETE', `/workflows/${body.id}`, { headers: auth });
      expect(del.body.code).toBe('WORKFLOW_LOCKED');
      const read = await engine.api('GET', `/workflows/${body.id}`, { headers: auth });
      expect(read.body).toMatchObject({ name: 'Morning show', status: 'STARTING' });
      runtime.releaseStarts();
      await live(engine).channels.settled();
      expect((await engine.api('GET', `/workflows/${body.id}`, { headers: auth })).body.status).toBe('RUNNING');
    } finally {
      delete engine.ctx.services.channelRuntime;
    }
  });
});
