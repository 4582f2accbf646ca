// Every page of the console at 1280×800 and on a phone (issue 17): a screenshot under test-output/console, every
// control reachable with Tab, and no console error, page error or CSP violation on the way.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { recordAlarm, recordMetric } from '../../src/channels/channel-telemetry.store.js';
import { hasChromium } from '../helpers/hls-player.js';
import { DESKTOP, ensureConsoleBuilt, launch, openConsole, PHONE, screenshot, signIn } from './helpers.js';

let engine: TestEngine;
let browser: Browser | undefined;
const chromium = await hasChromium();
const seeded = { workflowId: '', vodGuid: '', adinsertGuid: '', brokerChannel: '' };

beforeAll(async () => {
  await ensureConsoleBuilt();
  engine = await startTestEngine();
  const auth = { authorization: (await engine.login()).IdToken };
  const blueprint = JSON.parse(readFileSync('fixtures/blueprints/url-pull-hls-ads.json', 'utf8'));
  const workflow = await engine.api('POST', '/workflows', { headers: auth, body: { name: 'Seeded channel', blueprint, tags: ['news'] } });
  seeded.workflowId = workflow.body.id;
  await engine.api('POST', '/channels', { headers: auth, body: { workflows: [seeded.workflowId] } });
  // What a runtime reports (through the same store calls the channel service makes): samples for the graphs, an alarm.
  const now = Date.now();
  for (let i = 0; i < 30; i++) {
    await recordMetric(engine.ctx.store.db, { workflowId: seeded.workflowId, metric: 'NETWORK_IN', value: 4 + Math.sin(i / 3), at: now - (30 - i) * 60_000 });
  }
  await recordAlarm(engine.ctx.store.db, { workflowId: seeded.workflowId, code: 'INPUT_LOSS', message: 'No input for 5 s', severity: 'MAJOR', active: true, at: now - 120_000 });
  seeded.vodGuid = (await engine.api('POST', '/broker/vod/meta', { headers: auth, body: { title: 'Waiting for a file' } })).body.data.guid;
  seeded.adinsertGuid = (await engine.api('POST', '/broker/adinserts', {
    headers: auth, body: { name: 'House ads', type: 'live', source_url: 'https://origin.example.com/live/', ad_server: 'https://ads.example.com/vast?cb=[cachebuster]' },
  })).body.guid;
  seeded.brokerChannel = (await engine.api('POST', '/broker/channels', {
    headers: auth, body: { name: 'Seeded broker channel', description: 'virtual', active: 1, type: 'virtual', hasAds: 0 },
  })).body.guid;
  await engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: 'playout server', active: true } });
  const orgGuid = JSON.parse(Buffer.from(auth.authorization.split('.')[1]!, 'base64url').toString()).organization;
  await engine.api('POST', `/organizations/${orgGuid}/meta-groups`, {
    headers: auth,
    body: { name: 'Sports', attachment: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a01', fields: [{ name: 'league', type: 'enum', required: true, additionalData: { enumOptions: ['A', 'B'] } }] },
  });
  if (chromium) browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await engine?.close();
});

/** Presses Tab until every visible, enabled control was focused (or a round more); answers those never reached. */
async function unreachableByTab(page: Page, atLeast = 3): Promise<string[]> {
  const total = await page.evaluate(() => {
    const controls = [...document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])')]
      .filter((el) => !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden');
    controls.forEach((el, i) => el.setAttribute('data-tab-probe', String(i)));
    (document.activeElement as HTMLElement | null)?.blur();
    return controls.length;
  });
  expect(total, 'controls on the page').toBeGreaterThanOrEqual(atLeast);
  const reached = new Set<string>();
  for (let i = 0; i < total + 10; i++) {
    await page.keyboard.press('Tab');
    const probe = await page.evaluate(() => document.activeElement?.getAttribute('data-tab-probe') ?? null);
    if (probe !== null) reached.add(probe);
    if (reached.size === total) break;
  }
  return page.evaluate((seen) => [...document.querySelectorAll<HTMLElement>('[data-tab-probe]')]
    .filter((el) => !seen.includes(el.getAttribute('data-tab-probe') ?? ''))
    .map((el) => `${el.tagName.toLowerCase()} "${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}"`), [...reached]);
}

const PAGES = [
  { name: 'workflows', hash: '/live/workflows', heading: 'Workflows' },
  { name: 'blueprints', hash: '/live/blueprints', heading: 'Blueprints' },
  { name: 'channel', hash: () => `/live/channels/${seeded.workflowId}`, heading: 'Seeded channel' },
  { name: 'vod-library', hash: '/vod', heading: 'Video on demand' },
  { name: 'vod-detail', hash: () => `/vod/${seeded.vodGuid}`, heading: 'Waiting for a file' },
  { name: 'broker-channels', hash: '/broker/channels', heading: 'Broker channels' },
  { name: 'schedule', hash: () => `/broker/channels/${seeded.brokerChannel}`, heading: 'Seeded broker channel: schedule' },
  { name: 'playlists', hash: '/broker/playlists', heading: 'Playlists' },
  { name: 'ads', hash: '/ads', heading: 'Ad insertion' },
  { name: 'ad-detail', hash: () => `/ads/${seeded.adinsertGuid}`, heading: 'House ads' },
  { name: 'api-keys', hash: '/api-keys', heading: 'API keys' },
  { name: 'meta-groups', hash: '/meta-groups', heading: 'Meta groups' },
  { name: 'statistics', hash: '/statistics', heading: 'Statistics' },
];

describe.skipIf(!chromium)('every console page', () => {
  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    it(`renders on a ${label} (${viewport.width}×${viewport.height}), reachable by keyboard, without console errors`, async () => {
      const { page, problems, close } = await openConsole(browser!, engine, viewport);
      try {
        await screenshot(page, `login-${label}`);
        expect(await unreachableByTab(page)).toEqual([]);
        await signIn(page);
        for (const entry of PAGES) {
          await page.evaluate((hash) => { location.hash = hash; }, typeof entry.hash === 'function' ? entry.hash() : entry.hash);
          await page.getByRole('heading', { level: 1, name: entry.heading }).waitFor();
          await page.waitForLoadState('networkidle');
          await page.getByText('Loading…').waitFor({ state: 'detached' });
          if (entry.name === 'channel') {
            // The seeded samples draw a chart (a canvas) and the alarm is listed.
            await page.getByRole('figure', { name: 'network in' }).locator('canvas').waitFor();
            expect(await page.getByRole('table', { name: 'Alarms' }).textContent()).toContain('No input for 5 s');
          }
          await screenshot(page, `${entry.name}-${label}`);
          expect(await unreachableByTab(page), entry.name).toEqual([]);
          // Nothing is wider than the viewport: a phone scrolls only vertically (tables scroll inside their frame).
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          expect(overflow, `${entry.name} is wider than the viewport`).toBeLessThanOrEqual(0);
        }
        if (label === 'phone') {
          await page.getByRole('button', { name: 'Menu' }).click();
          await screenshot(page, 'menu-phone');
          expect(await unreachableByTab(page)).toEqual([]);
        }
        expect(problems).toEqual([]);
      } finally {
        await close();
      }
    }, 120_000);
  }
});
