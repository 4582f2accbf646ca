// The VOD pages of the console (issue 17): drop a small clip on the upload zone, watch the library take it to
// complete, then open it and play it in the console's own player, with its renditions and the formats record.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page, Route } from 'playwright-core';
import { generateMedia } from '../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { hasChromium } from '../helpers/hls-player.js';
import { ensureConsoleBuilt, goTo, launch, openConsole, playedSeconds, screenshot, signIn } from './helpers.js';

let engine: TestEngine;
let browser: Browser | undefined;
let clip: string;
let completed: string | undefined;
const chromium = await hasChromium();
// With espeak-ng and pocketsphinx (setup.sh --test) the clip speaks, so captions can be generated from it.
const speech = existsSync('/usr/bin/espeak-ng') && existsSync('/usr/bin/pocketsphinx_continuous');

beforeAll(async () => {
  await ensureConsoleBuilt();
  clip = await generateMedia(speech ? 'speech' : 'clip', path.join(mkdtempSync(path.join(os.tmpdir(), 'console-vod-')), 'console clip.mp4'), { seconds: 4, size: '320x180', preset: 'ultrafast' });
  engine = await startTestEngine();
  if (chromium) browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await engine?.close();
});

describe.skipIf(!chromium)('VOD in the console', () => {
  it('uploads a dropped clip with tus, shows it reach complete, and plays it with its renditions', async () => {
    const { page, problems, close } = await openConsole(browser!, engine);
    try {
      await signIn(page);
      await goTo(page, 'Video on demand');
      // Every status the library shows on the way, as the page changes (a MutationObserver, not samples of ours).
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seenStatuses: string[] }).seenStatuses = seen;
        new MutationObserver(() => {
          for (const row of document.querySelectorAll('[data-vod]')) {
            const status = row.getAttribute('data-status') ?? '';
            if (seen.at(-1) !== status) seen.push(status);
          }
        }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
      });
      // A real drop event carrying the file, as a browser delivers one from the desktop.
      const transfer = await page.evaluateHandle(({ b64, name }) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], name, { type: 'video/mp4' }));
        return data;
      }, { b64: readFileSync(clip).toString('base64'), name: path.basename(clip) });
      await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: transfer });

      const upload = page.locator('[data-upload="console clip.mp4"]');
      await expect.poll(() => upload.getAttribute('data-state'), { timeout: 30_000 }).toBe('done');
      expect(await upload.getByRole('progressbar').getAttribute('value')).toBe('100');
      const row = page.locator('[data-vod]').filter({ hasText: 'console clip' });
      await expect.poll(() => row.getAttribute('data-status'), { timeout: 120_000, interval: 500 }).toBe('complete');
      await screenshot(page, 'vod-library-desktop');
      const seen = await page.evaluate(() => (window as unknown as { seenStatuses: string[] }).seenStatuses);
      expect(seen.at(-1)).toBe('complete');
      expect(seen.some((status) => ['uploaded', 'queued', 'encoding'].includes(status)), `statuses shown: ${seen.join(' → ')}`).toBe(true);

      const guid = (await row.getAttribute('data-vod'))!;
      completed = guid;
      const info = (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body.data;
      expect(info.originalFileName).toBe('console clip.mp4');
      expect(info.status).toBe('complete');

      await row.getByRole('link').click();
      const video = page.getByLabel('VOD player', { exact: true });
      await video.waitFor();
      await expect.poll(() => playedSeconds(video), { timeout: 30_000 }).toBeGreaterThan(1.5);
      // 320x180 gives one rung: Auto plus that rendition.
      const renditions = await page.getByLabel('VOD player rendition').locator('option').allTextContents();
      expect(renditions[0]).toBe('Auto');
      expect(renditions.slice(1).some((r) => r.startsWith('180p'))).toBe(true);
      const formats = page.getByRole('table', { name: 'Formats record' });
      await expect.poll(() => formats.textContent()).toContain('mp4_output_180');
      // Each column holds what its header says: the picture size under Resolution, the MP4's bytes under File size, and
      // the link names the file.
      expect(await formats.locator('thead th').allTextContents()).toEqual(['Media type', 'Resolution', 'Bit rate', 'File size', 'Link']);
      const record = (await engine.api('GET', `/broker/vod/list/${guid}`)).body.data as { mp4: Array<{ mediaType: string; width: number; height: number; size: number; cdnUrl: string }> };
      const mp4 = record.mp4.find((m) => m.mediaType === 'mp4_output_180')!;
      const cells = await formats.locator('tbody tr').filter({ hasText: 'mp4_output_180' }).locator('td').allTextContents();
      expect(cells).toEqual(['mp4_output_180', `${mp4.width}×${mp4.height}`, expect.any(String), `${(mp4.size / 1e6).toFixed(1)} MB`, mp4.cdnUrl.split('/').pop()]);
      expect(await formats.getByRole('link', { name: mp4.cdnUrl.split('/').pop() }).getAttribute('href')).toBe(mp4.cdnUrl);
      await screenshot(page, 'vod-detail-desktop');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 240_000);

  it('resumes an upload cut off by a reload from what the server stored, and stores the file whole', async () => {
    // 9 MiB: one 8 MiB chunk is stored before the cut, the rest after the resume.
    const bytes = randomBytes(9 * 1024 * 1024);
    const b64 = bytes.toString('base64');
    const lastModified = Date.now() - 60_000;
    const drop = async (page: Page) => {
      const transfer = await page.evaluateHandle(({ data, modified }) => {
        const raw = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const list = new DataTransfer();
        list.items.add(new File([raw], 'big take.mp4', { type: 'video/mp4', lastModified: modified }));
        return list;
      }, { data: b64, modified: lastModified });
      await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    };
    const { page, close } = await openConsole(browser!, engine);
    try {
      await signIn(page);
      await goTo(page, 'Video on demand');
      // The second chunk never arrives: the page is reloaded while it is on its way, as when a laptop lid closes.
      let patches = 0;
      let held: Route | undefined;
      await page.route('**/broker/upload/*', async (route) => {
        if (route.request().method() === 'PATCH' && ++patches === 2) {
          held = route;
          return;
        }
        await route.continue();
      });
      await drop(page);
      await expect.poll(() => held !== undefined, { timeout: 30_000 }).toBe(true);
      // Reload while the chunk is held (releasing it first could let it finish and the upload complete); only then drop it.
      await page.reload();
      await held!.abort().catch(() => undefined);
      await page.unrouteAll({ behavior: 'ignoreErrors' });

      // After the reload: no new upload is created (no POST), and what is sent starts past the first chunk.
      const sent: Array<{ method: string; offset: number }> = [];
      page.on('request', (request) => {
        if (!request.url().includes('/broker/upload')) return;
        sent.push({ method: request.method(), offset: Number(request.headers()['upload-offset'] ?? -1) });
      });
      await page.getByRole('heading', { name: 'Video on demand' }).waitFor();
      await drop(page);
      const upload = page.locator('[data-upload="big take.mp4"]');
      await expect.poll(() => upload.getAttribute('data-state'), { timeout: 30_000 }).toBe('done');
      await expect.poll(() => upload.textContent()).toContain('resumed');
      // The resume asks the server where it stopped (HEAD) and sends only the rest, from past the first chunk (how much
      // of the cut chunk the server kept before the reload varies, up to all of it).
      expect(sent.filter((r) => r.method === 'POST')).toEqual([]);
      expect(sent.some((r) => r.method === 'HEAD')).toBe(true);
      for (const patch of sent.filter((r) => r.method === 'PATCH')) expect(patch.offset).toBeGreaterThanOrEqual(8 * 1024 * 1024);

      // One VOD for the file, and the stored source is byte for byte the dropped file.
      const vods = (await engine.api('GET', '/broker/vod/list')).body.data.filter((v: { originalFileName: string }) => v.originalFileName === 'big take.mp4');
      expect(vods).toHaveLength(1);
      const uploads = path.join(engine.dataDir, 'uploads');
      const stored = readdirSync(uploads).filter((f) => f.endsWith('.mp4')).map((f) => readFileSync(path.join(uploads, f)));
      const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
      expect(stored.map(md5)).toContain(md5(bytes));
    } finally {
      await close();
    }
  }, 120_000);

  it.skipIf(!speech)('generates captions for the video and shows them in its player', async () => {
    expect(completed, 'the upload test left a complete video').toBeDefined();
    const { page, problems, close } = await openConsole(browser!, engine);
    try {
      await signIn(page);
      await page.evaluate((guid) => { location.hash = `/vod/${guid}`; }, completed!);
      await page.getByRole('button', { name: 'Generate captions' }).click();
      const captions = page.getByTestId('captions-state');
      await expect.poll(() => captions.textContent(), { timeout: 120_000, interval: 1000 }).toMatch(/^complete \(\d+ cues\)/);
      const choice = page.getByLabel('VOD player captions');
      await expect.poll(() => choice.locator('option').count(), { timeout: 30_000 }).toBeGreaterThan(1);
      await choice.selectOption({ index: 1 });
      const video = page.getByLabel('VOD player', { exact: true });
      await expect.poll(() => video.evaluate((v: HTMLVideoElement) => [...v.textTracks].some((t) => t.mode === 'showing'))).toBe(true);
      await screenshot(page, 'vod-captions-desktop');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 180_000);
});
