// The ad-insertion page of the console (issue 17): create a configuration with the form, then follow its
// "test playback" link and watch the stitched stream play in the console's player. The origin and the ad server
// are the local fixtures (DESIGN.md: fakes only for what is outside the engine, as real HTTP servers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestEngine } from '../helpers/engine.js';
import { hasChromium } from '../helpers/hls-player.js';
import { startSsai, type SsaiHarness } from '../ssai/setup.js';
import { ensureConsoleBuilt, goTo, launch, openConsole, playedSeconds, screenshot, signIn } from './helpers.js';

let ssai: SsaiHarness;
let browser: Browser | undefined;
const chromium = await hasChromium();

beforeAll(async () => {
  await ensureConsoleBuilt();
  ssai = await startSsai({ engine: await startTestEngine() });
  if (chromium) browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await ssai?.close();
  await ssai?.engine.close();
});

describe.skipIf(!chromium)('ad insertion in the console', () => {
  it('creates a configuration and its test-playback link plays the stream through the proxy', async () => {
    const { page, problems, close } = await openConsole(browser!, ssai.engine);
    try {
      await signIn(page);
      await goTo(page, 'Ad insertion');
      const form = page.getByRole('form', { name: 'New ad insertion configuration' });
      await form.getByLabel('Name').fill('Fixture ads');
      await form.getByLabel(/Origin/).fill(`${ssai.origin.url}/`);
      await form.getByLabel(/Ad server/).fill(`${ssai.vast.url}/vast4?sid=[session.id]&dur=[avail.duration]`);
      await form.getByRole('button', { name: 'Create' }).click();

      const row = page.locator('[data-adinsert]').filter({ hasText: 'Fixture ads' });
      await row.waitFor();
      const guid = (await row.getAttribute('data-adinsert'))!;
      const stored = (await ssai.engine.api('GET', `/broker/adinserts/${guid}`, { headers: ssai.auth })).body.data;
      expect(stored.sourceUrl).toBe(`${ssai.origin.url}/`);
      expect(await row.textContent()).toContain(`/v1/master/${guid}/`);
      await screenshot(page, 'ads-created-desktop');

      await row.getByLabel(/Stream path/).fill('live/master.m3u8');
      await row.getByRole('link', { name: 'Test playback' }).click();
      const video = page.getByLabel('Test player', { exact: true });
      await video.waitFor();
      expect(await video.getAttribute('data-src')).toBe(`${ssai.engine.ctx.config.publicUrl}/v1/master/${guid}/live/master.m3u8`);
      await expect.poll(() => playedSeconds(video), { timeout: 30_000 }).toBeGreaterThan(2);
      await screenshot(page, 'test-playback-desktop');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);
});
