import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from '../../helpers/hls-player.js';
import { securityHeaders } from '../../../src/http/security-headers.js';

const chromiumThere = await hasChromium();
if (!chromiumThere) process.stderr.write(`no Chromium at ${CHROMIUM}: the in-browser CSP checks are skipped\n`);

/** Opens a page and gathers every CSP violation it reports, from the DOM event and from the console. */
async function openWatched(browser: Browser, url: string): Promise<{ page: Page; violations: string[] }> {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { cspViolations: string[] }).cspViolations ??= [];
      (window as unknown as { cspViolations: string[] }).cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  await page.goto(url);
  return { page, violations };
}

describe('security headers', () => {
  let engine: TestEngine;
  let browser: Browser | undefined;
  beforeAll(async () => {
    engine = await startTestEngine();
    if (chromiumThere) {
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    }
  });
  afterAll(async () => {
    await browser?.close();
    await engine?.close();
  });

  it('sends nosniff, a frame policy and a CSP on API answers, errors and the docs page', async () => {
    for (const url of ['/healthz', '/no/such/route', '/docs', '/openapi.json']) {
      const response = await fetch(`${engine.url}${url}`);
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(response.headers.get('x-frame-options'), url).toBe('DENY');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).not.toContain('unsafe-eval');
      // CORS still answers every request, and media stay loadable from other sites.
      expect(response.headers.get('access-control-allow-origin'), url).toBe('*');
      expect(response.headers.get('cross-origin-resource-policy'), url).toBe('cross-origin');
    }
  });

  it('sends nosniff once on the hot paths served before Express (the proxy, the linear channels)', async () => {
    for (const [method, url] of [['GET', '/v1/master/unknown/index.m3u8'], ['OPTIONS', '/v1/master/unknown/index.m3u8'],
      ['GET', '/v1/segment/g/s/a/0/0/0.ts'], ['GET', '/linear/unknown/master.m3u8'], ['OPTIONS', '/linear/unknown/master.m3u8']]) {
      const response = await fetch(`${engine.url}${url}`, { method, redirect: 'manual' });
      expect(response.headers.get('x-content-type-options'), `${method} ${url}`).toBe('nosniff');
      expect(response.headers.get('access-control-allow-origin'), `${method} ${url}`).toBe('*');
      // written by the handler itself, not by Express (whose CSP these answers do not carry)
      expect(response.headers.get('content-security-policy'), `${method} ${url}`).toBeNull();
    }
  });

  it.skipIf(!chromiumThere)('renders /docs in Chromium with no CSP violation', async () => {
    const { page, violations } = await openWatched(browser!, `${engine.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    // Swagger UI renders a large document as it is scrolled (the raw paths made it one): scroll until more show.
    for (let i = 0; i < 100 && (await page.locator('.opblock').count()) <= 10; i++) {
      await page.evaluate(() => window.scrollBy(0, 1500));
      await page.waitForTimeout(100);
    }
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    await page.evaluate(() => window.scrollTo(0, 0));
    // Expanding an operation renders its schemas and examples: the part of swagger-ui that styles most.
    await page.locator('.opblock-summary').first().click();
    await page.waitForSelector('.opblock-body', { timeout: 10_000 });
    const fromDom = await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []);
    expect([...violations, ...fromDom]).toEqual([]);
    await page.close();
  });

  describe('a console-shaped page under the same policy', () => {
    let dir: string;
    let server: import('node:http').Server;
    let base: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'csp-console-'));
      await promisify(execFile)('ffmpeg', ['-hide_banner', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=25',
        '-t', '3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25',
        '-f', 'hls', '-hls_time', '1', '-hls_playlist_type', 'vod', path.join(dir, 'index.m3u8')]);
      // What a Vite build serves: index.html with a same-origin module script that bundles hls.js and calls the API.
      const app = express();
      app.use(securityHeaders());
      app.get('/console/', (_req, res) => void res.type('html').send('<!doctype html><video id="v" muted></video><script type="module" src="/console/assets/app.js"></script>'));
      app.get('/console/assets/app.js', (_req, res) => void res.type('js').send(`
        import Hls from '/console/assets/hls.mjs';
        window.result = { playedTo: 0, fatal: null, api: null };
        fetch('/healthz').then((r) => r.json()).then((b) => { window.result.api = b.status; });
        const v = document.getElementById('v');
        const hls = new Hls();
        hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) window.result.fatal = d.details; });
        hls.on(Hls.Events.MANIFEST_PARSED, () => v.play());
        v.addEventListener('timeupdate', () => { window.result.playedTo = v.currentTime; });
        hls.loadSource('/media/index.m3u8');
        hls.attachMedia(v);`));
      app.get('/console/assets/hls.mjs', (_req, res) => res.sendFile(path.resolve('node_modules/hls.js/dist/hls.mjs')));
      app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
      app.use('/media', express.static(dir));
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server?.close(resolve));
      await rm(dir, { recursive: true, force: true });
    });

    it.skipIf(!chromiumThere)('plays HLS through hls.js (MSE, blob: media) and calls the API with no CSP violation', async () => {
      const { page, violations } = await openWatched(browser!, `${base}/console/`);
      await page.waitForFunction(() => {
        const r = (window as unknown as { result?: { playedTo: number; fatal: string | null } }).result;
        return r !== undefined && (r.fatal !== null || r.playedTo >= 1);
      }, undefined, { timeout: 30_000 }).catch(() => undefined);
      const result = await page.evaluate(() => (window as unknown as { result: { playedTo: number; fatal: string | null; api: string | null } }).result);
      expect(result.fatal).toBeNull();
      expect(result.playedTo).toBeGreaterThanOrEqual(1);
      expect(result.api).toBe('ok');
      expect(await page.evaluate(() => document.querySelector('video')!.src)).toMatch(/^blob:/);
      const fromDom = await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []);
      expect([...violations, ...fromDom]).toEqual([]);
      await page.close();
    });
  });
});
