// The setup the DASH proxy tests share: an origin, the proxy, one configuration of an ad server path on the origin;
// closed in reverse order after the file.
import { startSsai, type SsaiHarness } from './setup.js';

interface Closable { close(): Promise<void> }

export interface DashSuite<O> { h: SsaiHarness; origin: O; guid: string }

/** Starts the proxy once `origin` is up and configures `adServerPath` (of the fixture VAST server) on it. */
export async function startDashSuite<O extends Closable & { url: string }>(origin: O | Promise<O>, adServerPath: string): Promise<DashSuite<O>> {
  const o = await origin;
  const h = await startSsai();
  return { h, origin: o, guid: await h.configure(adServerPath, { type: 'broker', source: `${o.url}/` }) };
}

/** Closes what was started, the proxy first (some may be unset when a start failed). */
export async function closeDashSuite(s: Partial<DashSuite<Closable>> | undefined): Promise<void> {
  await s?.h?.close();
  await s?.origin?.close();
}

/**
 * Opens new viewers (`open` answers one's first MPD) until one has its ads (`has`), within 3 minutes: the creatives
 * are prepared to the content's shape on the first decisions (another file's engine preparing the same creatives in
 * the shared directory at once answers them without), so the preparation is the event waited for.
 */
export async function untilAViewerHasAds(open: () => Promise<string>, has: (mpd: string) => boolean = (mpd) => mpd.includes('/v1/segment/')): Promise<void> {
  const until = Date.now() + 180_000;
  for (;;) {
    const text = await open();
    if (has(text)) return;
    if (Date.now() > until) throw new Error(`no viewer got its ads within 3 minutes: ${text.slice(0, 200)}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
