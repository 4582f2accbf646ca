// Drives the built console in Debian's Chromium (playwright-core): builds it when the sources are newer than the
// build, opens it on a test engine, signs in, and records every console error, page error and CSP violation.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { CONSOLE_DIST } from '../../wiring/console.mount.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type TestEngine } from '../helpers/engine.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/hls-player.js';

export const SCREENSHOTS = path.resolve('test-output/console');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules' || entry.name === '.build-lock') continue;
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

function builtAt(): number {
  try {
    return statSync(path.join(CONSOLE_DIST, 'index.html')).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * npm run build:console when console/dist is missing or older than a source file. Test files run in parallel
 * workers: one builds (holding a lock directory) while the others wait for it, so no two builds share the folder.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  const lock = path.resolve('console/.build-lock');
  for (;;) {
    if (builtAt() > newest(path.resolve('console'))) return;
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than two minutes belongs to a build that died.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    await new Promise<void>((resolve, reject) => {
      execFile('npm', ['run', 'build:console', '--silent'], { maxBuffer: 16 * 1024 * 1024 }, (error, _out, stderr) =>
        error ? reject(new Error(`console build failed: ${stderr}`)) : resolve());
    });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface ConsolePage {
  page: Page;
  /** console errors, uncaught page errors and failed same-origin requests, as text */
  problems: string[];
  close: () => Promise<void>;
}

export async function openConsole(browser: Browser, engine: TestEngine, viewport = DESKTOP): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.goto(`${engine.url}/console/`);
  return { page, problems, close: () => context.close() };
}

export async function signIn(page: Page, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Follows a menu entry (on a phone the menu opens first). */
export async function goTo(page: Page, label: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  const toggle = page.getByRole('button', { name: 'Menu' });
  if (await toggle.isVisible()) await toggle.click();
  await nav.getByRole('link', { name: label, exact: true }).click();
  await page.getByRole('heading', { level: 1 }).first().waitFor();
}

/**
 * How far a player's video has played, pressing play while it is paused: a first play() can come before the lazily
 * loaded hls.js attached its source (it then rejects and the video stays paused), as a user's first click could.
 */
export async function playedSeconds(video: Locator): Promise<number> {
  return video.evaluate((v: HTMLVideoElement) => {
    if (v.paused) void v.play().catch(() => undefined);
    return v.currentTime;
  });
}
