// Shared setup of the proxy tests: a real engine with the ssai part, the local origin and the local ad server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { foundationPart } from '../../wiring/foundation.part.js';
import { vodPart } from '../../wiring/vod.part.js';
import { createSsaiPart, type SsaiPartOptions } from '../../wiring/ssai.part.js';
import { OriginServer, type OriginServerOptions } from '../../fixtures/origin-server.js';
import { VastServer } from '../../fixtures/vast-server.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

/** Prepared creatives are shared by every test engine on this machine (the encoder caches by creative key). */
export const SHARED_CREATIVES = path.join(os.tmpdir(), 'engine-ssai-creatives-v1');

export interface SsaiHarness {
  engine: TestEngine;
  origin: OriginServer;
  vast: VastServer;
  auth: Record<string, string>;
  /** creates a configuration over the origin's /live or /vod path and returns its guid */
  configure(adServerPath: string, opts?: { type?: 'live' | 'broker'; source?: string }): Promise<string>;
  get(url: string, init?: RequestInit): Promise<{ status: number; text: string; headers: Headers }>;
  close(): Promise<void>;
}

export async function startEngineWith(options: SsaiPartOptions & { env?: Record<string, string> } = {}): Promise<TestEngine> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-ssai-'));
  fs.mkdirSync(path.join(dataDir, 'media'), { recursive: true });
  fs.mkdirSync(SHARED_CREATIVES, { recursive: true });
  fs.symlinkSync(SHARED_CREATIVES, path.join(dataDir, 'media', 'creatives'));
  const { env, ...part } = options;
  return startTestEngine({
    dataDir, ...(env ? { env } : {}),
    // SSAI_TEST_CUT=0: the proxy tests run without cutBeforeUndecidedBreaks (on by default, as in the product)
    parts: [foundationPart, vodPart, createSsaiPart({ originCacheMs: 0, creativeWaitMs: 120_000, decisionDeadlineMs: 180_000, ...(process.env.SSAI_TEST_CUT === '0' ? { cutBeforeUndecidedBreaks: false } : {}), ...part })],
  });
}

export async function startSsai(options: SsaiPartOptions & { origin?: OriginServerOptions; env?: Record<string, string>; engine?: TestEngine } = {}): Promise<SsaiHarness> {
  const { origin: originOptions, engine: given, ...rest } = options;
  const [origin, vast] = await Promise.all([OriginServer.start(originOptions), VastServer.start()]);
  const engine = given ?? await startEngineWith(rest);
  const auth = { Authorization: (await engine.login()).IdToken };
  return {
    engine, origin, vast, auth,
    configure: async (adServerPath, opts = {}) => {
      const created = await engine.api('POST', '/broker/adinserts', {
        headers: auth,
        body: { name: 'test', type: opts.type ?? 'live', ad_server: `${vast.url}${adServerPath}`, source_url: opts.source ?? `${origin.url}/` },
      });
      if (created.status !== 200) throw new Error(`adinsert creation failed: ${JSON.stringify(created.body)}`);
      return created.body.guid as string;
    },
    get: async (url, init) => {
      const res = await fetch(url.startsWith('http') ? url : `${engine.url}${url}`, { redirect: 'manual', ...init });
      return { status: res.status, text: await res.text(), headers: res.headers };
    },
    close: async () => {
      if (!given) await engine.close();
      await Promise.all([origin.close(), vast.close()]);
    },
  };
}

/** The variant/rendition URLs of a rewritten multivariant playlist, in order. */
export function variantUrls(master: string): string[] {
  const out: string[] = [];
  for (const line of master.split('\n')) {
    const m = /URI="([^"]+)"/.exec(line);
    if (m && line.startsWith('#EXT-X-MEDIA')) out.push(m[1]!);
    else if (line && !line.startsWith('#')) out.push(line.trim());
  }
  return out;
}

/** The segment URIs of a media playlist. */
export function segmentUris(playlist: string): string[] {
  return playlist.split('\n').filter((l) => l && !l.startsWith('#'));
}
