import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { BlueprintCatalog } from '../../../src/blueprints/blueprint.catalog.js';

describe('blueprints and regions', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { ENGINE_REGIONS: 'eu-west,us-east' } });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  it('lists the catalog with only the summary fields', async () => {
    const answer = await engine.api('GET', '/blueprints', { headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.body.items.length).toBeGreaterThanOrEqual(5);
    for (const item of answer.body.items) expect(Object.keys(item).sort()).toEqual(['description', 'featured', 'id', 'name', 'tags']);
    expect(answer.body.items.map((i: { id: string }) => i.id)).toEqual(expect.arrayContaining(['rtmp-push-abr', 'srt-push', 'url-pull-hls-ads', 'mp4-loop-test', 'two-input-switch']));
  });

  it('reads a complete blueprint with every field of spec 2.1', async () => {
    const answer = await engine.api('GET', '/blueprints/url-pull-hls-ads', { headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 'url-pull-hls-ads', deprecated: false, createArchives: false, createRawArchive: false,
      settings: { adServers: [{ destinationRefId: 'hls-origin' }] },
      metadata: { arrangement: { meta: expect.any(Array) } },
      components: { encoder: { input: { type: 'URL_PULL' }, channel: { channelClass: 'SINGLE_PIPELINE' } } },
    });
    expect(typeof answer.body.created).toBe('number');
    expect(answer.body.createStateMachineArn).toBeTruthy();
  });

  it('answers 404 for an unknown blueprint and 401 without credentials', async () => {
    expect((await engine.api('GET', '/blueprints/nope', { headers: auth })).body.code).toBe('NOT_FOUND');
    expect((await engine.api('GET', '/blueprints')).status).toBe(401);
  });

  it('has an RTMP push ladder of 1080p, 720p and 480p', () => {
    const abr = BlueprintCatalog.load().get('rtmp-push-abr');
    const videos = abr?.components.encoder?.channel?.encoderSettings.videoDescriptions as Array<{ height: number }>;
    expect(videos.map((v) => v.height)).toEqual([1080, 720, 480]);
  });

  it('lists the configured regions with the first as default', async () => {
    const answer = await engine.api('GET', '/regions', { headers: auth });
    expect(answer.body.items).toEqual([
      { name: 'eu-west', description: expect.any(String), default: true },
      { name: 'us-east', description: expect.any(String), default: false },
    ]);
  });
});
