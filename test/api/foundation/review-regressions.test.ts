// Regressions found in review of the control plane: each request here answered 500 or left a stuck state before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';

describe('control-plane review regressions', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let key: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    const created = await engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: 'review', active: true } });
    key = (await engine.api('GET', `/broker/api-keys/${created.body.guid}`, { headers: auth })).body.data.value;
  });
  afterAll(async () => engine?.close());

  it('answers 400 naming the params for a path parameter that is not valid percent-encoding', async () => {
    for (const path of ['/workflows/%E0%A4%A', '/broker/vod/list/%', '/inputs/%zz']) {
      const answer = await engine.api('GET', path, { headers: auth });
      expect(answer.status, path).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
      expect(answer.body.fields[0].field).toBe('params');
    }
  });

  it('refuses an empty startHour or endHour instead of reading it as hour 0', async () => {
    const answer = await engine.api('GET', '/channels/statistics?startDate=2024-01-01&endDate=2024-01-02&granularity=HOURLY&startHour=&endHour=3&statistics=RUNNING', { headers: auth });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('VALIDATION_FAILED');
    expect(answer.body.fields.map((f: { field: string }) => f.field)).toContain('startHour');
    const ok = await engine.api('GET', '/channels/statistics?startDate=2024-01-01&endDate=2024-01-02&granularity=HOURLY&startHour=0&endHour=3&statistics=RUNNING', { headers: auth });
    expect(ok.status).toBe(200);
  });

  it('answers 409 to the loser of two concurrent creations of a user with one email', async () => {
    const body = { email: 'twin@example.test', name: 'Twin', password: 'long-enough-password', role: 'viewer' };
    const roles = await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/roles`, { headers: auth });
    body.role = roles.body.data[0].name;
    const answers = await Promise.all([1, 2, 3].map(() => engine.api('POST', `/organizations/${engine.defaultOrganizationId}/users`, { headers: auth, body })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    for (const answer of answers.filter((a) => a.status === 409)) expect(answer.body.code).toBe('ALREADY_EXISTS');
  });

  it('does not leave a VOD queued forever when the encode cannot be queued', async () => {
    const headers = { 'X-Api-Key': key };
    const meta = await engine.api('POST', '/broker/private/vod/meta', { headers, body: { title: 'Clip', encode: false } });
    const guid = meta.body.data.guid as string;
    const upload = await fetch(`${engine.url}/broker/private/vod/upload/${guid}?fileName=clip.mp4`, {
      method: 'POST', headers: { ...headers, 'Content-Type': 'video/mp4' }, body: Buffer.from('not really a video'),
    });
    expect(upload.status).toBe(200);
    const queue = engine.ctx.services.encodeQueue!;
    const enqueue = queue.enqueue;
    queue.enqueue = async () => { throw new Error('queue down'); };
    try {
      expect((await engine.api('POST', `/broker/private/vod/encode/${guid}`, { headers })).status).toBe(500);
    } finally {
      queue.enqueue = enqueue;
    }
    const info = (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body.data;
    expect(info.status).toBe('error');
    expect(info.statusReason).toMatch(/could not be queued/);
  });
});

describe('device registration race', () => {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    it(`registers a device once when its first heartbeats arrive together (${dialect})`, async () => {
      if (dialect === 'postgres' && !(await postgresAvailable())) return;
      const engine = await startTestEngine({ dialect });
      try {
        const auth = { Authorization: (await engine.login()).IdToken };
        for (let round = 0; round < 5; round += 1) {
          const id = `race-${round}`;
          const answers = await Promise.all([1, 2, 3, 4].map((n) => engine.api('POST', `/devices/${id}/heartbeat`, { headers: auth, body: { name: `box ${n}` } })));
          expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
        }
        const list = await engine.api('GET', '/devices', { headers: auth });
        expect(list.body.items).toHaveLength(5);
      } finally {
        await engine.close();
      }
    });
  }
});
