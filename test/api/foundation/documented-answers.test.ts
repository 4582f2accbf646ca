// The response schemas routes document (only documented: the handler's answer is sent as it is) hold for what the
// engine answers: each answer parses and loses no field (zod drops the fields a schema does not name). The console's
// generated types come from these schemas (test/api/foundation/console-types.test.ts).
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerKeyList } from '../../../src/api-keys/api-key.router.js';
import { blueprintList } from '../../../src/blueprints/blueprint.router.js';
import { listingList } from '../../../src/broker-listings/listing.schema.js';
import { recordMetric } from '../../../src/channels/channel-telemetry.store.js';
import { graphAnswer } from '../../../src/channels/channel-ops.router.js';
import { regionList } from '../../../src/regions/region.router.js';
import { workflowList } from '../../../src/workflows/workflow.router.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint } from '../live/live-helpers.js';

describe('documented answers', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { ENGINE_REGIONS: 'eu-west,us-east' } });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  const holds = async (schema: z.ZodType, url: string) => {
    const answer = await engine.api('GET', url, { headers: auth });
    expect(answer.status, url).toBe(200);
    expect(schema.parse(answer.body), url).toEqual(answer.body);
    return answer.body;
  };

  it('GET /regions and GET /blueprints', async () => {
    expect((await holds(regionList, '/regions')).items).toHaveLength(2);
    expect((await holds(blueprintList, '/blueprints')).items.length).toBeGreaterThan(0);
  });

  it('GET /workflows, with and without the optional fields', async () => {
    const blueprint = catalogBlueprint('rtmp-push-abr');
    const first = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint, name: 'Plain' } });
    const schedule = { startDateTime: '2030-01-01T06:00:00Z', duration: 60, recurrence: { unit: 'WEEK', days: ['MON', 'FRI'] } };
    const second = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint, name: 'Scheduled', tags: ['news'], schedule } });
    expect([first.status, second.status]).toEqual([200, 200]);
    const list = await holds(workflowList, '/workflows');
    expect(list.items.map((w: { name: string }) => w.name).sort()).toEqual(['Plain', 'Scheduled']);
    expect(list.items.find((w: { name: string }) => w.name === 'Scheduled').schedule).toMatchObject(schedule);
  });

  it('GET /channels/{workflowId}/graphs', async () => {
    const created = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name: 'Graphed' } });
    await recordMetric(engine.ctx.store.db, { workflowId: created.body.id, metric: 'NETWORK_IN', value: 5.5, at: Date.now() - 60_000 });
    const graph = await holds(graphAnswer, `/channels/${created.body.id}/graphs?metric=NETWORK_IN`);
    expect(graph.points).toHaveLength(1);
  });

  it('GET /broker/api-keys', async () => {
    const created = await engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: 'Scheduler', active: true } });
    expect(created.status).toBe(201);
    expect((await holds(brokerKeyList, '/broker/api-keys')).data).toHaveLength(1);
  });

  it('GET /broker/listings, with and without the optional fields', async () => {
    const channel = (await engine.api('POST', '/broker/channels', { headers: auth, body: { name: 'Linear', description: '', active: 1, type: 'virtual', hasAds: 0 } })).body.guid;
    const T = 1_900_000_000;
    const listings = [{ start: T, end: T + 600, title: 'news' }, { start: T + 600, end: T + 1200, title: 'weather', description: 'Local', color: '#336699', imageUrl: 'https://img.example.test/w.png' }];
    const posted = await engine.api('POST', '/broker/listings/multiple', { headers: auth, body: { channel, start: T, end: T + 1200, listings } });
    expect(posted.status).toBe(200);
    expect((await holds(listingList, `/broker/listings?channel=${channel}&start=${T}&end=${T + 1200}`)).data).toHaveLength(2);
  });
});
