// POST …/vod/encode/audio/{guid}: offline speech recognition → WebVTT in the HLS master (SUBTITLES) and the MPD.
import { access } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from './helpers.js';

let engine: TestEngine | undefined;
afterAll(async () => engine?.close());
const has = (f: string) => access(f).then(() => true, () => false);

describe('captions', () => {
  it('adds recognized captions to the HLS master and the DASH manifest', async (ctx) => {
    if (!(await has('/usr/bin/pocketsphinx_continuous')) || !(await has('/usr/bin/espeak-ng'))) {
      ctx.skip('pocketsphinx or espeak-ng is not installed (apt-get install pocketsphinx pocketsphinx-en-us espeak-ng)');
      return;
    }
    engine = await startTestEngine();
    const key = await apiKey(engine);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vod-captions-'));
    const speech = await generateMedia('speech', path.join(dir, 'speech.mp4'));
    const guid = await createMeta(engine, key, { title: 'speech' });
    expect((await uploadPlain(engine, key, guid, speech)).status).toBe(200);
    expect((await waitForStatus(engine, guid, ['complete', 'error'])).status).toBe('complete');
    const token = (await engine.login()).IdToken;
    const answer = await engine.api('POST', `/broker/vod/encode/audio/${guid}`, { headers: { Authorization: token } });
    expect(answer.status).toBe(200);
    let info: any;
    for (let i = 0; i < 600; i++) {
      info = (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body.data;
      if (info.captions?.status === 'complete' || info.captions?.status === 'error') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(info.captions.status, info.captions.reason).toBe('complete');
    expect(info.captions.cues).toBeGreaterThan(0);
    const vtt = await fetch(info.captions.vttUrl);
    expect(vtt.headers.get('content-type')).toMatch(/^text\/vtt/);
    expect(await vtt.text()).toMatch(/^WEBVTT/);
    const master = await (await fetch(info.hlsUrl)).text();
    expect(master).toMatch(/#EXT-X-MEDIA:TYPE=SUBTITLES/);
    expect(master).toContain('SUBTITLES="subs"');
    const mpd = await (await fetch(info.dashUrl)).text();
    expect(mpd).toMatch(/contentType="text"/);
    // The records are read again from the changed manifests and stay complete.
    const formats = await engine.api('GET', `/broker/vod/list/${guid}`);
    expect(formats.body.data.hasHls).toBe(true);
  }, 120_000);
});
