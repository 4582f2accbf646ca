// The broker pages of the console (issue 17): a playlist of an encoded video, a virtual channel, and its schedule
// edited in the console (added, lengthened, shortened), checked against the listings the engine stores.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { generateMedia } from '../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { hasChromium } from '../helpers/hls-player.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from '../api/vod/helpers.js';
import { ensureConsoleBuilt, goTo, launch, openConsole, screenshot, signIn } from './helpers.js';

let engine: TestEngine;
let browser: Browser | undefined;
let vodGuid: string;
let auth: Record<string, string>;
const chromium = await hasChromium();

beforeAll(async () => {
  await ensureConsoleBuilt();
  engine = await startTestEngine();
  const key = await apiKey(engine);
  const clip = await generateMedia('clip', path.join(mkdtempSync(path.join(os.tmpdir(), 'console-broker-')), 'clip.mp4'), { seconds: 6, size: '320x180', preset: 'ultrafast' });
  vodGuid = await createMeta(engine, key, { title: 'Opening titles' });
  await uploadPlain(engine, key, vodGuid, clip);
  const info = await waitForStatus(engine, vodGuid, ['complete', 'error'], 120_000);
  if (info.status !== 'complete') throw new Error(`the seed VOD did not encode: ${info.statusReason}`);
  auth = { authorization: (await engine.login()).IdToken };
  if (chromium) browser = await launch();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await engine?.close();
});

interface StoredListing { title: string; start: number; end: number; playlist?: string; vod?: string }

async function stored(channel: string, from: number): Promise<StoredListing[]> {
  const answer = await engine.api('GET', `/broker/listings?channel=${channel}&start=${from - 86_400}&end=${from + 2 * 86_400}`, { headers: auth });
  expect(answer.status).toBe(200);
  return answer.body.data;
}

async function saveSchedule(page: Page): Promise<void> {
  const editor = page.getByRole('form', { name: 'Schedule editor' });
  // The previous save's "Saved" is still shown when the button is clicked: wait for this save's request, after which
  // the status was cleared, so the "Saved" polled for below is this save's.
  const posted = page.waitForResponse((r) => r.url().includes('/broker/listings/multiple') && r.request().method() === 'POST');
  await editor.getByRole('button', { name: 'Save schedule' }).click();
  await posted;
  await expect.poll(() => editor.getByRole('status').textContent().catch(() => '')).toMatch(/^Saved/);
  await expect.poll(() => editor.getByRole('alert').count()).toBe(0);
}

describe.skipIf(!chromium)('broker channels in the console', () => {
  it('makes a playlist and a virtual channel and edits its schedule', async () => {
    const { page, problems, close } = await openConsole(browser!, engine);
    try {
      await signIn(page);

      await goTo(page, 'Playlists');
      const form = page.getByRole('form', { name: 'New playlist' });
      await form.getByLabel('Name').fill('Morning');
      await form.getByLabel('Video to add').selectOption(vodGuid);
      await form.getByRole('button', { name: 'Add source' }).click();
      await form.getByRole('button', { name: 'Create playlist' }).click();
      const playlistRow = page.locator('[data-playlist]').filter({ hasText: 'Morning' });
      await playlistRow.waitFor();
      const playlistGuid = (await playlistRow.getAttribute('data-playlist'))!;
      expect((await engine.api('GET', `/broker/playlists/${playlistGuid}`, { headers: auth })).body.data.sources.map((s: { guid: string }) => s.guid)).toEqual([vodGuid]);
      await screenshot(page, 'playlists-desktop');

      await goTo(page, 'Broker channels');
      const create = page.getByRole('form', { name: 'New broker channel' });
      await create.getByLabel('Name').fill('Channel One');
      await create.getByLabel('Description').fill('All day');
      await create.getByRole('button', { name: 'Create channel' }).click();
      const row = page.locator('[data-broker-channel]').filter({ hasText: 'Channel One' });
      await row.waitFor();
      const channel = (await row.getAttribute('data-broker-channel'))!;
      const read = (await engine.api('GET', `/broker/channels/${channel}`, { headers: auth })).body.data;
      expect(read).toMatchObject({ name: 'Channel One', type: 'virtual', active: 1, hasAds: 0 });
      await screenshot(page, 'broker-channels-desktop');

      await row.getByRole('link', { name: 'Channel One' }).click();
      await page.getByRole('heading', { name: 'Channel One: schedule' }).waitFor();
      const editor = page.getByRole('form', { name: 'Schedule editor' });
      // The chain starts a minute ago (in the browser's time zone): its first listing is on air now.
      const start = await page.evaluate(() => {
        const d = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
        const local = new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
        return { local, sec: d.getTime() / 1000 };
      });
      await editor.getByLabel('Chain starts at').fill(start.local);
      await editor.getByRole('button', { name: 'Add listing' }).click();
      await editor.getByRole('button', { name: 'Add listing' }).click();
      await editor.getByLabel('Listing 1 title').fill('News');
      await editor.getByLabel('Listing 1 plays').selectOption(`playlist:${playlistGuid}`);
      await editor.getByLabel('Listing 2 title').fill('Film');
      await editor.getByLabel('Listing 2 minutes').fill('45');
      await editor.getByLabel('Listing 2 plays').selectOption(`vod:${vodGuid}`);
      await saveSchedule(page);
      expect(await stored(channel, start.sec)).toMatchObject([
        { title: 'News', start: start.sec, end: start.sec + 1800, playlist: playlistGuid },
        { title: 'Film', start: start.sec + 1800, end: start.sec + 4500, vod: vodGuid },
      ]);
      await page.locator('[data-listing="Film"]').waitFor();

      // Lengthen the first: the second moves back with it.
      await editor.getByLabel('Listing 1 minutes').fill('60');
      await saveSchedule(page);
      expect(await stored(channel, start.sec)).toMatchObject([
        { title: 'News', start: start.sec, end: start.sec + 3600 },
        { title: 'Film', start: start.sec + 3600, end: start.sec + 6300 },
      ]);
      await screenshot(page, 'schedule-desktop');

      // Remove the second: what it covered is cleared, not left behind.
      await editor.getByRole('button', { name: 'Remove listing 2' }).click();
      await saveSchedule(page);
      expect((await stored(channel, start.sec)).map((l) => l.title)).toEqual(['News']);
      await expect.poll(() => page.locator('[data-listing="Film"]').count()).toBe(0);

      // The playback URL the page hands out is the engine's. (No part serves a virtual channel's linear HLS on main
      // yet, so the preview is not played here: a 404 would only test that it is missing.)
      expect(await page.getByRole('region', { name: 'Playback' }).locator('code').textContent()).toBe(read.playbackUrl);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 180_000);
});
