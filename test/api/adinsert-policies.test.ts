// Issue 31: the ad-operations policy fields of an adinsert configuration, stored on both dialects, validated field by
// field, merged by updates (absent kept, null removed) and read by the proxy through the configuration cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../helpers/engine.js';

const postgres = await postgresAvailable();
const body = { name: 'Ad ops', type: 'live', ad_server: 'https://ads.example.test/vast?sid=[session.id]', source_url: 'https://origin.example.test/live/' };
const policies = {
  personalization_threshold_seconds: 30,
  avail_suppression: { mode: 'BEHIND_LIVE_EDGE', value: '00:01:30', fill_policy: 'PARTIAL_AVAIL' },
  bumper_start_url: 'https://cdn.example.test/bumper-in.mp4',
  bumper_end_url: 'https://cdn.example.test/bumper-out.mp4',
  live_preroll_ad_server: 'https://ads.example.test/preroll?sid=[session.id]',
  live_preroll_max_seconds: 20,
  ad_marker_passthrough: false,
  content_segment_prefix: 'https://content-cdn.example.test/c',
  ad_segment_prefix: 'https://ad-cdn.example.test/a',
};

describe.each(DIALECTS)('ad-operations policies on %s', (dialect) => { describe.skipIf(dialect === 'postgres' && !postgres)('', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  beforeAll(async () => {
    engine = await startTestEngine({ dialect });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  const read = async (guid: string) => (await engine.api('GET', `/broker/adinserts/${guid}`, { headers: auth })).body.data as Record<string, unknown>;

  it('reads today\'s behaviour when no policy is given', async () => {
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body });
    const data = await read(created.body.guid as string);
    expect(data.adMarkerPassthrough).toBe(true);
    for (const key of ['personalizationThresholdSeconds', 'availSuppression', 'bumperStartUrl', 'livePrerollAdServer', 'contentSegmentPrefix', 'adSegmentPrefix']) expect(data).not.toHaveProperty(key);
  });

  it('stores every field, keeps them across an update that leaves them out, removes one with null', async () => {
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { ...body, ...policies } });
    expect(created.status).toBe(200);
    const guid = created.body.guid as string;
    const expected = {
      personalizationThresholdSeconds: 30,
      availSuppression: { mode: 'BEHIND_LIVE_EDGE', value: '00:01:30', fillPolicy: 'PARTIAL_AVAIL' },
      bumperStartUrl: policies.bumper_start_url, bumperEndUrl: policies.bumper_end_url,
      livePrerollAdServer: policies.live_preroll_ad_server, livePrerollMaxSeconds: 20,
      adMarkerPassthrough: false,
      contentSegmentPrefix: policies.content_segment_prefix, adSegmentPrefix: policies.ad_segment_prefix,
    };
    expect(await read(guid)).toMatchObject(expected);
    const cached = await engine.ctx.services.adinserts!.get(guid);
    expect(cached).toMatchObject({ personalizationThresholdSeconds: 30, availSuppression: { mode: 'BEHIND_LIVE_EDGE', valueSeconds: 90, fillPolicy: 'PARTIAL_AVAIL' }, adMarkerPassthrough: false });

    await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, name: 'Renamed' } });
    expect(await read(guid)).toMatchObject({ ...expected, name: 'Renamed' });

    const put = await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, bumper_start_url: null, personalization_threshold_seconds: 45, avail_suppression: { mode: 'OFF' } } });
    expect(put.status).toBe(200);
    const after = await read(guid);
    expect(after).not.toHaveProperty('bumperStartUrl');
    expect(after).toMatchObject({ bumperEndUrl: policies.bumper_end_url, personalizationThresholdSeconds: 45, availSuppression: { mode: 'OFF', value: '00:00:00', fillPolicy: 'FULL_AVAIL_ONLY' } });
    expect((await engine.ctx.services.adinserts!.get(guid))?.personalizationThresholdSeconds).toBe(45); // the cache is invalidated
  });

  it('refuses a bad value naming its field, and changes nothing stored', async () => {
    const bad: Array<[string, unknown]> = [
      ['personalization_threshold_seconds', -1], ['personalization_threshold_seconds', '30'],
      ['avail_suppression', { mode: 'SOMETIMES' }], ['avail_suppression', { mode: 'OFF', value: '1:30' }],
      ['avail_suppression', { mode: 'OFF', fill_policy: 'ALL' }], ['avail_suppression', { mode: 'OFF', extra: 1 }],
      ['bumper_start_url', 'ftp://x.test/a.mp4'], ['bumper_end_url', 'not a url'],
      ['live_preroll_ad_server', 'nope'], ['live_preroll_max_seconds', 0], ['live_preroll_max_seconds', 2.5], ['live_preroll_max_seconds', 601],
      ['ad_marker_passthrough', 'yes'], ['content_segment_prefix', 'cdn.example.test'], ['ad_segment_prefix', 42],
    ];
    const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { ...body, ...policies } });
    const guid = created.body.guid as string;
    const before = await read(guid);
    for (const [field, value] of bad) {
      const res = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { ...body, [field]: value } });
      expect(res.status, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect((res.body.fields as Array<{ field: string }>)[0]!.field.split('.')[0]).toBe(field);
      const put = await engine.api('PUT', `/broker/adinserts/${guid}`, { headers: auth, body: { ...body, name: 'Changed', [field]: value } });
      expect(put.status).toBe(400);
    }
    expect(await read(guid)).toEqual(before);
  });
}); });
