// A test engine with what the broker tests need: the admin's ID token, an API key, users of each role.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { generateMedia } from '../../../fixtures/generate-media.js';
import type { EncodeProgress } from '../../../vod-encoder/ffmpeg-runner.js';
import type { VodRecords } from '../../../vod-encoder/records.types.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';

export interface BrokerHarness {
  engine: TestEngine;
  admin: Record<string, string>;
  key: Record<string, string>;
  org: string;
  roles: Record<'admin' | 'editor' | 'viewer', string>;
  /** adds a user of the role and answers its guid and ID-token header */
  user(role: 'editor' | 'viewer', name: string): Promise<{ guid: string; auth: Record<string, string> }>;
  /** GET of a broker list (ID token of the admin) */
  list(path: string): Promise<unknown[]>;
}

export async function startBroker(options: Parameters<typeof startTestEngine>[0] = {}): Promise<BrokerHarness> {
  const engine = await startTestEngine(options);
  const admin = { Authorization: (await engine.login()).IdToken };
  const created = await engine.api('POST', '/broker/api-keys', { headers: admin, body: { name: 'broker-tests', active: true } });
  const guid = String(created.body.url).split('/').pop();
  const value = (await engine.api('GET', `/broker/api-keys/${guid}`, { headers: admin })).body.data.value as string;
  const org = engine.defaultOrganizationId;
  const roleList = (await engine.api('GET', `/organizations/${org}/roles`, { headers: admin })).body.data as Array<{ guid: string; name: string }>;
  const roles = Object.fromEntries(roleList.map((r) => [r.name, r.guid])) as BrokerHarness['roles'];
  return {
    engine, admin, key: { 'X-Api-Key': value }, org, roles,
    user: async (role, name) => {
      const email = `${name}@example.test`;
      const made = await engine.api('POST', `/organizations/${org}/users`, { headers: admin, body: { email, name, password: 'password-123', role } });
      if (made.status !== 201) throw new Error(`user: ${made.status} ${JSON.stringify(made.body)}`);
      return { guid: made.body.guid as string, auth: { Authorization: (await engine.login(email, 'password-123')).IdToken } };
    },
    list: async (path) => (await engine.api('GET', path, { headers: admin })).body.data as unknown[],
  };
}

/**
 * A VOD record as a finished encode leaves it, without running ffmpeg: for API rules that only need a duration and a
 * status (the linear tests and the end-to-end test encode real media).
 */
export async function storedVod(h: BrokerHarness, durationSec: number, opts: { status?: 'complete' | 'created'; title?: string } = {}): Promise<string> {
  const vod = h.engine.ctx.services.vod!;
  const guid = randomUUID();
  await vod.store.create(h.org, guid, { type: 'source', title: opts.title ?? `clip ${durationSec}s` }, true);
  if ((opts.status ?? 'complete') === 'complete') {
    const records = { formats: { hasHls: true, hls: { variants: [] }, hasDash: false, mp4: [], hasMp4: false, hasThumbs: false }, hlsManifests: {}, hlsSegments: [], dashSegments: {}, thumbs: null, durationSec };
    await vod.store.complete(guid, `vod/${guid}/1`, records as unknown as VodRecords, { percent: 100, speedX: 1, etaSec: 0, stage: 'done' } as EncodeProgress);
  }
  return guid;
}

/** A real encode of a tiny generated clip (testsrc + tone) through the engine's upload and queue; answers its guid. */
export async function encodedVod(h: BrokerHarness, seconds: number, dir: string, title: string): Promise<string> {
  const file = await generateMedia('clip', path.join(dir, `${title}-${seconds}.mp4`), { seconds, size: '160x90' });
  const guid = (await h.engine.api('POST', '/broker/private/vod/meta', { headers: h.key, body: { title, type: 'source' } })).body.data.guid as string;
  const upload = await fetch(`${h.engine.url}/broker/private/vod/upload/${guid}?fileName=${title}.mp4`, {
    method: 'POST', headers: { ...h.key, 'Content-Type': 'video/mp4' }, body: await readFile(file),
  });
  if (upload.status >= 300) throw new Error(`upload ${upload.status}`);
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const info = (await h.engine.api('GET', `/broker/vod/list/${guid}/info`)).body?.data;
    if (info?.status === 'complete') return guid;
    if (info?.status === 'error') throw new Error(`encode of ${title} failed: ${info.statusReason}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`encode of ${title} did not finish`);
}
