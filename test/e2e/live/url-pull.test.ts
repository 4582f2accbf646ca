// The url-pull-hls-ads catalog blueprint end to end: a URL_PULL input reads a live HLS source protected with a
// username and password (spec 2.4 "PULL protocols … protected with a username and password"). The source is another
// channel of the same engine behind a Basic-auth gate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { hasChromium, playHls, servePlayer } from '../../helpers/hls-player.js';
import { basicAuthGate, createWorkflow, decodeLive, loopClip, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

const USER = 'viewer';
const PASSWORD = 's3cret pass';

describe('a channel from the url-pull-hls-ads blueprint', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
  });
  afterAll(async () => engine?.close());

  it('pulls a protected live HLS source with its username and password, and its output decodes and plays', { timeout: 150_000 }, async () => {
    const source = await createWorkflow(engine, auth, tinyBlueprint('mp4-loop-test'), 'Source');
    const sourceUrl = (await startAndSettle(engine, auth, source)).outputs[0].url as string;
    const gate = await basicAuthGate(engine.url, USER, PASSWORD);
    try {
      const pulled = new URL(sourceUrl);
      const withSource = (password: string) => tinyBlueprint('url-pull-hls-ads', (_channel, blueprint) => {
        blueprint.components.encoder.input.sources = [{ url: `${gate.url}${pulled.pathname}`, username: USER, passwordParam: password }];
        blueprint.settings = { adServers: [] };
      });

      const refused = await startAndSettle(engine, auth, await createWorkflow(engine, auth, withSource('wrong'), 'Wrong password'));
      expect(refused.channelStatus).toBe('START_FAILED');
      expect(refused.statusReason).toMatch(/401|Unauthorized/i);
      expect(gate.refused).toBeGreaterThan(0);

      const id = await createWorkflow(engine, auth, withSource(PASSWORD), 'Pulled');
      const detail = await startAndSettle(engine, auth, id);
      expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
      // the endpoint shows the source without its credentials
      expect(detail.inputs).toEqual([{ name: 'pull-in', type: 'URL_PULL', url: `${gate.url}${pulled.pathname}` }]);
      const decoded = await decodeLive(detail.outputs[0].url, 4);
      expect(decoded.errors).toBe('');
      expect(decoded.decodedSec).toBeGreaterThanOrEqual(3.5);
      expect(gate.served).toBeGreaterThan(2);
      if (await hasChromium()) {
        const player = await servePlayer();
        try {
          const played = await playHls(player.base, detail.outputs[0].url, 3, 45_000);
          expect(played.fatal).toBeNull();
          expect(played.levels).toBe(2);
        } finally {
          await player.close();
        }
      }
      expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
    } finally {
      await gate.close();
      await stopAndSettle(engine, auth, source);
    }
  });
});
