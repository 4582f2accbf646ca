// The live pages of the console (issue 17): create a workflow from a blueprint, start it, watch its preview play,
// schedule a break, stop it. The blueprint the browser fetches is the catalog's mp4-loop-test cut to one 320x180
// rendition (the e2e live tests' tinyBlueprint), so the real channel stays cheap on a shared machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { hasChromium } from '../helpers/hls-player.js';
import { loopClip, tinyBlueprint } from '../e2e/live/live-helpers.js';
import { ensureConsoleBuilt, goTo, launch, openConsole, playedSeconds, screenshot, signIn } from './helpers.js';

let engine: TestEngine;
let browser: Browser | undefined;
const chromium = await hasChromium();

beforeAll(async () => {
  await ensureConsoleBuilt();
  engine = await startTestEngine();
  await loopClip(engine);
  if (chromium) browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await engine?.close();
});

describe.skipIf(!chromium)('live channels in the console', () => {
  it('creates a workflow from a blueprint, starts it, plays its preview with and without ads, schedules a break, stops and deletes it', async () => {
    const { page, problems, close } = await openConsole(browser!, engine);
    try {
      // An SSAI configuration over the engine's own live outputs, named by the blueprint for the HLS destination, so
      // the channel page also shows (and plays) the stream with ads. The ad server answers nothing: content plays on.
      const adinsert = (await engine.api('POST', '/broker/adinserts', {
        headers: { authorization: (await engine.login()).IdToken },
        body: { name: 'Own outputs', type: 'live', source_url: `${engine.ctx.config.publicUrl}/live/`, ad_server: 'http://127.0.0.1:9/vast?cb=[cachebuster]' },
      })).body.guid as string;
      const blueprint = tinyBlueprint('mp4-loop-test');
      blueprint.createArchives = true;
      blueprint.settings = { ...blueprint.settings, adServers: [{ destinationRefId: 'hls-origin', adServerId: adinsert }] };
      await page.route('**/blueprints/mp4-loop-test', (route) => route.fulfill({ json: blueprint }));
      await signIn(page);
      await goTo(page, 'Blueprints');
      const card = page.locator('[data-blueprint="mp4-loop-test"]');
      await card.getByRole('button', { name: /Create a workflow/ }).click();
      const form = page.getByRole('form', { name: /New workflow/ });
      await form.getByLabel('Name').fill('Console channel');
      await form.getByLabel('Tags').fill('console, demo');
      await screenshot(page, 'blueprints-create-desktop');
      await form.getByRole('button', { name: 'Create workflow' }).click();

      await page.getByRole('heading', { name: 'Console channel' }).waitFor();
      const workflowId = decodeURIComponent(page.url().split('/live/channels/')[1] ?? '');
      const auth = { authorization: (await engine.login()).IdToken };
      const stored = await engine.api('GET', `/workflows/${workflowId}`, { headers: auth });
      expect(stored.status).toBe(200);
      expect(stored.body.tags).toEqual(['console', 'demo']);
      expect(stored.body.blueprint.id).toBe('mp4-loop-test');
      const status = () => page.locator('[data-status]').first().getAttribute('data-status');
      await expect.poll(status).toBe('READY');

      await page.getByRole('button', { name: 'Start', exact: true }).click();
      await expect.poll(status, { timeout: 60_000, message: 'the channel reaches RUNNING' }).toBe('RUNNING');
      const output = (await engine.api('GET', `/channels/${workflowId}`, { headers: auth })).body.outputs[0];
      const preview = page.getByLabel(`Preview of ${output.destinationId}`, { exact: true });
      expect(await preview.getAttribute('data-src')).toBe(output.url);
      await expect.poll(() => playedSeconds(preview), { timeout: 45_000, message: 'the preview plays' }).toBeGreaterThan(2);
      expect(output.ssaiPlaybackUrl).toBe(`${engine.ctx.config.publicUrl}/v1/master/${adinsert}/${workflowId}/index.m3u8`);
      const withAds = page.getByLabel(`SSAI preview of ${output.destinationId}`, { exact: true });
      expect(await withAds.getAttribute('data-src')).toBe(output.ssaiPlaybackUrl);
      await expect.poll(() => playedSeconds(withAds), { timeout: 45_000, message: 'the SSAI preview plays' }).toBeGreaterThan(2);
      expect(await page.getByRole('region', { name: 'Ingest endpoints' }).textContent()).not.toContain('No ingest endpoint');

      await page.getByRole('form', { name: 'Break now' }).getByLabel(/Break length/).fill('20');
      await page.getByRole('button', { name: 'Break now' }).click();
      await expect.poll(() => page.getByRole('form', { name: 'Break now' }).getByRole('status').textContent()).toMatch(/A 20 s break starts at/);
      await screenshot(page, 'channel-running-desktop');

      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await expect.poll(status, { timeout: 60_000, message: 'the channel reaches DONE' }).toBe('DONE');
      await screenshot(page, 'channel-desktop');

      // A DONE channel starts as a copy, and says so before it does: declined, nothing starts; accepted, the copy
      // starts and its page opens.
      const workflowCount = async () => ((await engine.api('GET', '/workflows', { headers: auth })).body.items as unknown[]).length;
      const before = await workflowCount();
      const startCopy = page.getByRole('button', { name: 'Start a copy', exact: true });
      expect(await startCopy.getAttribute('title')).toContain('creates a copy of the workflow');
      await screenshot(page, 'channel-done-desktop');
      let asked = '';
      page.once('dialog', (dialog) => { asked = dialog.message(); void dialog.dismiss(); });
      await startCopy.click();
      await expect.poll(() => asked).toContain('starts the copy');
      expect(await workflowCount()).toBe(before);
      page.once('dialog', (dialog) => void dialog.accept());
      await startCopy.click();
      await expect.poll(() => decodeURIComponent(page.url().split('/live/channels/')[1] ?? ''), { message: "the copy's page opens" }).not.toBe(workflowId);
      const copyId = decodeURIComponent(page.url().split('/live/channels/')[1] ?? '');
      expect((await engine.api('GET', `/workflows/${copyId}`, { headers: auth })).body.name).toBe('Console channel');
      expect(await workflowCount()).toBe(before + 1);
      const copyStatus = async () => (await engine.api('GET', `/channels/${copyId}`, { headers: auth })).body.channelStatus as string;
      await expect.poll(copyStatus, { timeout: 60_000, message: 'the copy runs' }).toBe('RUNNING');
      expect((await engine.api('DELETE', '/channels', { headers: auth, body: { workflows: [copyId] } })).status).toBe(200);
      await expect.poll(copyStatus, { timeout: 60_000, message: 'the copy stops' }).toBe('DONE');

      // Its archive is in the library under the workflow's name, with its duration and picture size.
      const archives = (await engine.api('GET', '/broker/vod/list?status=archive')).body.data as Array<{ guid: string; meta: { custom_data?: { workflowId?: string } } }>;
      const archive = archives.find((a) => a.meta.custom_data?.workflowId === workflowId);
      expect(archive, 'the archive is listed').toBeDefined();
      await goTo(page, 'Video on demand');
      const archiveCells = page.locator(`[data-vod="${archive!.guid}"] td`);
      await expect.poll(() => archiveCells.allTextContents()).toEqual(['Archive of Console channel', 'archive', '—', expect.stringMatching(/^\d+:\d\d$/), '320×180', expect.any(String)]);
      expect(await page.locator('thead th').allTextContents()).toContain('Resolution');
      await screenshot(page, 'vod-library-archive-desktop');

      // Back on the list: the filters find it by tag and by status, and not by a status it does not have.
      await goTo(page, 'Workflows');
      const filters = page.getByRole('form', { name: 'Workflow filters' });
      await filters.getByLabel(/Tags/).fill('DEMO');
      await filters.getByLabel('DONE', { exact: true }).check();
      await expect.poll(() => page.locator(`[data-workflow="${workflowId}"]`).count()).toBe(1);
      await filters.getByLabel('DONE', { exact: true }).uncheck();
      await filters.getByLabel('RUNNING').check();
      await expect.poll(() => page.locator('[data-workflow]').count()).toBe(0);
      await filters.getByLabel('RUNNING').uncheck();
      await screenshot(page, 'workflows-desktop');

      // Delete it from its page (after the confirmation): back on the list, and gone from the engine.
      await page.locator(`[data-workflow="${workflowId}"]`).getByRole('link').click();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('heading', { name: 'Workflows' }).waitFor();
      await expect.poll(async () => (await engine.api('GET', `/workflows/${workflowId}`, { headers: auth })).status).toBe(404);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 180_000);

  it('schedules a workflow to run on chosen week days, and removes the schedule', async () => {
    const auth = { authorization: (await engine.login()).IdToken };
    const created = await engine.api('POST', '/workflows', { headers: auth, body: { name: 'Weekly show', blueprint: tinyBlueprint('mp4-loop-test'), tags: ['weekly'] } });
    const id = created.body.id as string;
    const { page, problems, close } = await openConsole(browser!, engine);
    try {
      await signIn(page);
      await page.evaluate((workflow) => { location.hash = `/live/channels/${workflow}`; }, id);
      const form = page.getByRole('form', { name: 'Workflow schedule' });
      await form.getByLabel('Start (UTC)').fill('2030-01-07T18:30');
      await form.getByLabel(/Duration/).fill('45');
      await form.getByLabel('Repeat').selectOption('WEEK');
      await form.getByLabel('WED').check();
      await form.getByLabel('MON').check();
      await form.getByLabel(/Last day/).fill('2030-03-01');
      await form.getByRole('button', { name: 'Save schedule' }).click();
      await expect.poll(() => form.getByRole('status').textContent().catch(() => '')).toBe('Schedule saved.');
      const stored = (await engine.api('GET', `/workflows/${id}`, { headers: auth })).body;
      expect(stored.schedule).toEqual({ startDateTime: '2030-01-07T18:30:00Z', duration: 45, recurrence: { unit: 'WEEK', days: ['MON', 'WED'], endDate: '2030-03-01' } });
      // The rest of the workflow is what it was.
      expect(stored).toMatchObject({ name: 'Weekly show', tags: ['weekly'], status: 'READY' });
      expect(stored.blueprint.id).toBe('mp4-loop-test');
      await expect.poll(() => page.getByTestId('workflow-schedule').textContent()).toBe('2030-01-07 18:30 UTC, 45 min, every MON, WED until 2030-03-01');
      await screenshot(page, 'workflow-schedule-desktop');

      await form.getByRole('button', { name: 'Remove schedule' }).click();
      await expect.poll(() => form.getByRole('status').textContent().catch(() => '')).toBe('Schedule removed.');
      expect((await engine.api('GET', `/workflows/${id}`, { headers: auth })).body.schedule).toBeUndefined();
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);
});
