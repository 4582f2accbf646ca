// Signing in to the console with the authentication service (issue 17), and what /console serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CHROMIUM, hasChromium } from '../helpers/hls-player.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { CONSOLE_CSP, consoleMount } from '../../wiring/console.mount.js';
import type { EngineContext } from '../../kernel/context.js';
import { ManualClock } from '../../kernel/core/clock.js';
import { ensureConsoleBuilt, goTo, launch, openConsole, screenshot, signIn } from './helpers.js';

let engine: TestEngine;
let browser: Browser | undefined;
const chromium = await hasChromium();
if (!chromium) process.stderr.write(`Chromium is not installed at ${CHROMIUM}: the console browser tests are skipped\n`);

beforeAll(async () => {
  await ensureConsoleBuilt();
  engine = await startTestEngine();
  if (chromium) browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await engine?.close();
});

describe('the console at /console', () => {
  it('serves the built page with a CSP that allows no inline script or style, and hashed assets cached for a year', async () => {
    const redirect = await fetch(`${engine.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    const page = await fetch(`${engine.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${engine.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    const missing = await fetch(`${engine.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe('ROUTE_NOT_FOUND');
  });

  it('answers 503 CONSOLE_NOT_BUILT with the command to run when there is no build', async () => {
    const warnings: unknown[] = [];
    const ctx = { logger: { warn: (...args: unknown[]) => warnings.push(args) } } as unknown as EngineContext;
    const app = express();
    consoleMount(ctx, '/nonexistent/console-dist')(app);
    const server = http.createServer(app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/`);
      expect(answer.status).toBe(503);
      const body = await answer.json();
      expect(body.code).toBe('CONSOLE_NOT_BUILT');
      expect(body.description).toContain('npm run build:console');
      expect(warnings).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it.skipIf(!chromium)('refuses a wrong password with the catalogued reason, then signs in and shows the workflows', async () => {
    const { page, problems, close } = await openConsole(browser!, engine);
    try {
      await page.getByLabel('Email').fill('admin@example.test');
      await page.getByLabel('Password').fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('INVALID_CREDENTIALS');
      await screenshot(page, 'login-desktop');
      await signIn(page);
      await page.getByRole('heading', { name: 'Workflows' }).waitFor();
      expect(page.url()).toContain('#/live/workflows');
      // The browser's own 401 line for the refused sign-in is the only console error.
      expect(problems.filter((p) => !p.includes('401'))).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe.skipIf(!chromium)('an expired session', () => {
  it('refreshes an ID token the engine no longer takes, and falls back to sign-in when the refresh token is gone too', async () => {
    const clock = new ManualClock(new Date());
    const timed = await startTestEngine({ clock });
    const { page, problems, close } = await openConsole(browser!, timed);
    try {
      await signIn(page);
      const first = await page.evaluate(() => sessionStorage.getItem('engine-console-session'));
      // Two hours later on the engine's clock: the ID token (1 h) is refused, the refresh token (30 days) is not.
      clock.set(clock.nowMs() + 2 * 3600_000);
      await goTo(page, 'API keys');
      const idToken = () => page.evaluate(() => JSON.parse(sessionStorage.getItem('engine-console-session') ?? '{}').idToken);
      await expect.poll(idToken).not.toBe(JSON.parse(first!).idToken);
      await page.getByText('No API key yet.').waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);

      clock.set(clock.nowMs() + 31 * 24 * 3600_000);
      await goTo(page, 'Meta groups');
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('engine-console-session'))).toBeNull();
      // Only the browser's lines for the refused requests (401) are errors.
      expect(problems.filter((p) => !p.includes('401'))).toEqual([]);
    } finally {
      await close();
      await timed.close();
    }
  });
});
