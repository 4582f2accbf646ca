import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { recordChannelEvent } from '../../../src/statistics/channel-events.js';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';

const postgres = await postgresAvailable();

describe.each(DIALECTS)('GET /channels/statistics on %s', (dialect) => {
  const skip = dialect === 'postgres' && !postgres;
  let engine: TestEngine;
  let auth: Record<string, string>;
  const get = (query: string) => engine.api('GET', `/channels/statistics?${query}`, { headers: auth });

  beforeAll(async () => {
    if (skip) return;
    engine = await startTestEngine({ dialect, clock: new ManualClock('2026-03-02T10:00:00Z'), env: { ENGINE_REGIONS: 'local,eu-west' } });
    auth = { Authorization: (await engine.login()).IdToken };
    const organizationId = engine.defaultOrganizationId;
    const events: Array<[string, string, string]> = [
      ['wf-1', 'CREATED', '2026-02-02T08:00:00Z'],
      ['wf-1', 'RUNNING', '2026-02-02T09:15:00Z'],
      ['wf-2', 'RUNNING', '2026-02-02T09:45:00Z'],
      ['wf-1', 'DONE', '2026-02-04T10:00:00Z'],
    ];
    for (const [workflowId, status, at] of events) {
      await recordChannelEvent(engine.ctx.store.db, { workflowId, organizationId, status, region: workflowId === 'wf-2' ? 'eu-west' : 'local', at: Date.parse(at) });
    }
    // another organization's event is never counted
    await recordChannelEvent(engine.ctx.store.db, { workflowId: 'wf-x', organizationId: 'another-org', status: 'RUNNING', region: 'local', at: Date.parse('2026-02-02T09:00:00Z') });
  });
  afterAll(async () => engine?.close());

  it.skipIf(skip)('counts recorded transitions per day, with statistics as a comma list or repeated', async () => {
    const comma = await get('startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING,DONE&granularity=DAILY');
    expect(comma.status).toBe(200);
    expect(comma.body).toEqual({
      items: [
        {
          statistic: 'RUNNING',
          items: [
            { timePeriod: { start: '2026-02-02T00:00:00Z', end: '2026-02-03T00:00:00Z' }, totals: { itemsCount: 2 } },
            { timePeriod: { start: '2026-02-03T00:00:00Z', end: '2026-02-04T00:00:00Z' }, totals: { itemsCount: 0 } },
            { timePeriod: { start: '2026-02-04T00:00:00Z', end: '2026-02-05T00:00:00Z' }, totals: { itemsCount: 0 } },
          ],
        },
        { statistic: 'DONE', items: [{ timePeriod: { start: '2026-02-04T00:00:00Z', end: '2026-02-05T00:00:00Z' }, totals: { itemsCount: 1 } }] },
      ],
    });
    const repeated = await get('startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING&statistics=DONE&granularity=DAILY');
    expect(repeated.body).toEqual(comma.body);
  });

  it.skipIf(skip)('groups by region and filters by one region', async () => {
    const grouped = await get('startDate=2026-02-02&startHour=9&endDate=2026-02-02&endHour=11&statistics=RUNNING&granularity=HOURLY&groupBy=REGION');
    expect(grouped.status).toBe(200);
    expect(grouped.body.items[0].items).toEqual([
      {
        dimensionGroup: { dimension: 'REGION', valueList: [{ value: 'eu-west', totals: { itemsCount: 1 } }, { value: 'local', totals: { itemsCount: 1 } }] },
        timePeriod: { start: '2026-02-02T09:00:00Z', end: '2026-02-02T10:00:00Z' },
      },
      { dimensionGroup: { dimension: 'REGION', valueList: [] }, timePeriod: { start: '2026-02-02T10:00:00Z', end: '2026-02-02T11:00:00Z' } },
    ]);
    const oneRegion = await get('startDate=2026-02-02&endDate=2026-02-02&statistics=RUNNING&granularity=DAILY&region=eu-west');
    expect(oneRegion.body.items[0].items[0].totals.itemsCount).toBe(1);
    const blankRegion = await get('startDate=2026-02-02&endDate=2026-02-02&statistics=RUNNING&granularity=DAILY&region=');
    expect(blankRegion.body.items[0].items[0].totals.itemsCount).toBe(2);
  });

  it.skipIf(skip)('refuses ranges over the limits with RANGE_TOO_LONG naming the limit', async () => {
    const hourly = await get('startDate=2026-01-01&startHour=0&endDate=2026-01-15&endHour=1&statistics=RUNNING&granularity=HOURLY');
    expect(hourly.status).toBe(400);
    expect(hourly.body).toMatchObject({ status: false, code: 'RANGE_TOO_LONG' });
    expect(hourly.body.description).toMatch(/14 days/);
    expect((await get('startDate=2026-01-01&startHour=0&endDate=2026-01-15&endHour=0&statistics=RUNNING&granularity=HOURLY')).status).toBe(200);
    for (const granularity of ['DAILY', 'WEEKLY', 'MONTHLY']) {
      const long = await get(`startDate=2025-01-01&endDate=2026-01-01&statistics=RUNNING&granularity=${granularity}`);
      expect(long.status).toBe(400);
      expect(long.body.code).toBe('RANGE_TOO_LONG');
      expect(long.body.description).toMatch(/1 year/);
      expect((await get(`startDate=2025-01-01&endDate=2025-12-31&statistics=RUNNING&granularity=${granularity}`)).status).toBe(200);
    }
  });

  it.skipIf(skip)('refuses bad queries with 400 VALIDATION_FAILED naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['endDate=2026-02-04&statistics=RUNNING&granularity=DAILY', 'startDate'],
      ['startDate=2026-02-30&endDate=2026-03-04&statistics=RUNNING&granularity=DAILY', 'startDate'],
      ['startDate=2026/02/01&endDate=2026-02-04&statistics=RUNNING&granularity=DAILY', 'startDate'],
      ['startDate=2026-02-01&endDate=2026-02-04&granularity=DAILY', 'statistics'],
      ['startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING,STOPPED&granularity=DAILY', 'statistics.1'],
      ['startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING&granularity=YEARLY', 'granularity'],
      ['startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING', 'granularity'],
      ['startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING&granularity=DAILY&groupBy=WORKFLOW', 'groupBy'],
      ['startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING&granularity=DAILY&region=mars-1', 'region'],
      ['startDate=2026-02-01&startHour=24&endDate=2026-02-04&endHour=1&statistics=RUNNING&granularity=HOURLY', 'startHour'],
      ['startDate=2026-02-01&endDate=2026-02-04&endHour=1&statistics=RUNNING&granularity=HOURLY', 'startHour'],
      ['startDate=2026-02-01&startHour=1&endDate=2026-02-04&statistics=RUNNING&granularity=DAILY', 'startHour'],
      ['startDate=2026-02-04&endDate=2026-02-01&statistics=RUNNING&granularity=DAILY', 'endDate'],
    ];
    for (const [query, field] of cases) {
      const answer = await get(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.code, query).toBe('VALIDATION_FAILED');
      expect(answer.body.fields.map((f: { field: string }) => f.field), query).toContain(field);
    }
    expect((await engine.api('GET', '/channels/statistics?startDate=2026-02-01&endDate=2026-02-04&statistics=RUNNING&granularity=DAILY')).status).toBe(401);
  });
});
