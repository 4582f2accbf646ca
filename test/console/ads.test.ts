// The ad-insertion page of the console (issue 17): create a configuration with the form, then follow its
// "test playback" link and watch the stitched stream play in the console's player. A configuration's page (issue 31)
// edits its policies, shows the API's word on a bad value under the field, and reads a debug session's log. The
// origin and the ad server are the local fixtures (DESIGN.md: fakes only for what is outside the engine, as real HTTP
// servers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestEngine } from '../helpers/engine.js';
import { hasChromium } from '../helpers/hls-player.js';
import { startSsai, variantUrls, type SsaiHarness } from '../ssai/setup.js';
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

  it("edits a configuration's policies, names the field of a bad value, and removes an emptied one", async () => {
    const created = await ssai.engine.api('POST', '/broker/adinserts', {
      headers: ssai.auth, body: { name: 'Policy ads', type: 'live', source_url: `${ssai.origin.url}/`, ad_server: `${ssai.vast.url}/vast4` },
    });
    const guid = created.body.guid as string;
    const stored = async () => (await ssai.engine.api('GET', `/broker/adinserts/${guid}`, { headers: ssai.auth })).body.data;
    const { page, problems, close } = await openConsole(browser!, ssai.engine);
    try {
      await signIn(page);
      await goTo(page, 'Ad insertion');
      const row = page.locator(`[data-adinsert="${guid}"]`);
      expect(await row.locator('[data-mode]').textContent()).toMatch(/^stitched\b/);
      await row.getByRole('link', { name: 'Edit Policy ads' }).click();
      await page.getByRole('heading', { level: 1, name: 'Policy ads' }).waitFor();
      const form = page.getByRole('form', { name: 'Edit configuration' });
      await form.getByLabel('Insertion mode').selectOption('guided');
      await form.getByLabel(/^Personalization threshold/).fill('4.5');
      await form.getByLabel('Avail suppression').selectOption('BEHIND_LIVE_EDGE');
      await form.getByLabel(/^Suppression distance/).fill('00:00:30');
      await form.getByLabel('Suppression fill policy').selectOption('PARTIAL_AVAIL');
      await form.getByLabel('Bumper before the ads (URL)').fill('https://cdn.example.com/bumper-in.mp4');
      await form.getByLabel(/^Live pre-roll max seconds/).fill('30');
      await form.getByLabel("Pass the origin's ad markers through").uncheck();
      await form.getByLabel(/^Content segment prefix/).fill('https://cdn.example.com/content/');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      expect(await stored()).toMatchObject({
        name: 'Policy ads', adServer: `${ssai.vast.url}/vast4`, sourceUrl: `${ssai.origin.url}/`, insertionMode: 'guided',
        personalizationThresholdSeconds: 4.5, availSuppression: { mode: 'BEHIND_LIVE_EDGE', value: '00:00:30', fillPolicy: 'PARTIAL_AVAIL' },
        bumperStartUrl: 'https://cdn.example.com/bumper-in.mp4', livePrerollMaxSeconds: 30, adMarkerPassthrough: false,
        contentSegmentPrefix: 'https://cdn.example.com/content/',
      });
      // The form shows what was stored.
      expect(await form.getByLabel(/^Suppression distance/).inputValue()).toBe('00:00:30');
      await screenshot(page, 'ads-edit-desktop');

      // A value the API refuses: its message under the field it names, nothing stored.
      await form.getByLabel(/^Live pre-roll max seconds/).fill('0');
      await form.getByRole('button', { name: 'Save' }).click();
      const bad = form.locator('.field.invalid');
      await bad.waitFor();
      expect(await bad.locator('.field-label').textContent()).toBe('Live pre-roll max seconds');
      expect(await bad.locator('.field-error').textContent()).toBe('at least 1');
      expect(await form.getByRole('alert').textContent()).toContain('live_preroll_max_seconds');
      expect((await stored()).livePrerollMaxSeconds).toBe(30);
      await screenshot(page, 'ads-edit-invalid-desktop');

      // An emptied optional field is removed; the others are kept.
      await form.getByLabel(/^Live pre-roll max seconds/).fill('30');
      await form.getByLabel('Bumper before the ads (URL)').fill('');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      expect(await form.locator('.field.invalid').count()).toBe(0);
      const after = await stored();
      expect(after).not.toHaveProperty('bumperStartUrl');
      expect(after).toMatchObject({ livePrerollMaxSeconds: 30, insertionMode: 'guided', adMarkerPassthrough: false });

      await page.getByRole('link', { name: '← Ad insertion' }).click();
      expect(await page.locator(`[data-adinsert="${guid}"] [data-mode]`).textContent()).toMatch(/^guided\b/);
      // The 400 was the form's answer, shown in the page: not a console error.
      expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  it("reads a debug session's log, and says when a session has none", async () => {
    const guid = await ssai.configure('/vast4?sid=[session.id]');
    const master = await ssai.get(`/v1/master/${guid}/live/master.m3u8?ads.debug=1`);
    expect(master.status, master.text).toBe(200);
    const video = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
    const sid = video.split('/')[4]!;
    // The break in the origin's window is decided while its playlist is read (a first read may come before).
    const log = async () => (await ssai.get(`/v1/debug/${guid}/${sid}`, { headers: ssai.auth })).text;
    await expect.poll(async () => {
      expect((await ssai.get(video)).status).toBe(200);
      return JSON.parse(await log()).entries.filter((e: { kind: string }) => e.kind === 'decision').length;
    }, { timeout: 60_000 }).toBeGreaterThan(0);
    const entries = JSON.parse(await log()).entries as Array<{ kind: string; url?: string; outcome?: string }>;

    const { page, problems, close } = await openConsole(browser!, ssai.engine);
    try {
      await signIn(page);
      await page.evaluate((hash) => { location.hash = hash; }, `/ads/${guid}`);
      const box = page.getByRole('region', { name: 'Debug log' });
      await box.waitFor();
      expect(await box.textContent()).toContain(`${ssai.engine.ctx.config.publicUrl}/v1/master/${guid}/live/master.m3u8?ads.debug=1`);
      await box.getByLabel('Session id').fill('no-such-session');
      await box.getByRole('button', { name: 'Show log' }).click();
      const none = box.getByRole('status');
      await none.waitFor();
      expect(await none.textContent()).toContain('No debug log for session no-such-session');

      // The media playlist URL pasted as it is: the session id is read from it.
      await box.getByLabel('Session id').fill(`${ssai.engine.url}${video}`);
      await box.getByRole('button', { name: 'Show log' }).click();
      const table = box.getByRole('table', { name: 'Debug log entries' });
      await table.waitFor();
      expect(await none.count()).toBe(0);
      const rows = table.locator('tbody tr');
      expect(await rows.count()).toBeGreaterThanOrEqual(entries.length);
      expect(await table.locator('tr[data-kind="session"]').textContent()).toContain(`${ssai.origin.url}/live/master.m3u8`);
      expect(await table.locator('tr[data-kind="origin"]').first().textContent()).toContain(ssai.origin.url);
      expect(await table.locator('tr[data-kind="ad-request"]').first().textContent()).toContain(`${ssai.vast.url}/vast4?sid=${sid}`);
      const decision = entries.find((e) => e.kind === 'decision')!;
      expect(await table.locator('tr[data-kind="decision"]').first().textContent()).toContain(decision.outcome);
      await screenshot(page, 'ads-debug-log-desktop');
      // The unknown session's 404 was the box's answer, shown in the page: not a console error.
      expect(problems.filter((p) => !p.includes('404'))).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);
});
