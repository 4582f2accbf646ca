// Issue 32 item 1: kill -9 of one ssai process while viewers play through a break, half on each. A cluster (api, two
// ssai, a worker for the creatives) on private stores; a real-time live origin (a 10 s cue-out break every 20 s); the
// mock ad server gives each viewer its own ads and tracking URLs (/vast-viewer). Each simulated player is a session of
// its own pinned to one ssai process (its URL, as a sticky load balancer would): it reloads its media playlist every
// target duration and fetches each new ad segment once through /v1/segment (the redirect that fires the beacons).
// Mid-break one process is killed with -9; its viewers, refused, are re-pointed at the survivor and carry on with the
// same playlist URL (the same session). Measured from outside: every answer, every playlist's numbering and URIs, every
// beacon the ad server counted.
import { Agent, request as undiciRequest } from 'undici';
import { OriginServer } from '../../../fixtures/origin-server.js';
import { VastServer } from '../../../fixtures/vast-server.js';
import { until } from '../../cluster/cluster.js';
import type { EngineProcess } from '../../helpers/engine-process.js';
import { variantUrls } from '../../ssai/setup.js';
import { alive, request, startOutageCluster, type OutageCluster } from '../outage-cluster.js';
import type { FaultFigures, FaultScenarioOptions } from './fault-figures.js';

const TARGET_MS = 2_000;
/** the events /v1/segment fires per ad (ssai/serve/segment-route.ts), and the ad server's name of each VAST ad by index */
const EVENTS = ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const;
type Event = (typeof EVENTS)[number];
const AD_NAMES = ['a', 'b'];

/** /v1/segment/{guid}/{session}/{availId}/{adIndex}/{n}/{segment} */
interface AdSegment { sid: string; avail: string; adIndex: number; segIndex: number }
function adSegmentOf(uri: string): AdSegment | undefined {
  const parts = uri.split('?')[0]!.split('/');
  if (parts[1] !== 'v1' || parts[2] !== 'segment' || parts.length < 9) return undefined;
  return { sid: parts[4]!, avail: decodeURIComponent(parts[5]!), adIndex: Number(parts[6]), segIndex: Number.parseInt(parts[8]!, 10) };
}

/** The events the proxy fires for segment `segIndex` of an ad of these segment durations (as segment-route.ts does). */
export function eventsOfSegment(segIndex: number, durations: readonly number[]): Event[] {
  const out: Event[] = [];
  const total = durations.reduce((a, b) => a + b, 0);
  const offset = durations.slice(0, segIndex).reduce((a, b) => a + b, 0);
  const end = offset + (durations[segIndex] ?? 0);
  if (segIndex === 0) out.push('impression', 'start');
  for (const [event, q] of [['firstQuartile', 0.25], ['midpoint', 0.5], ['thirdQuartile', 0.75]] as const) if (q * total >= offset && q * total < end) out.push(event);
  if (segIndex === durations.length - 1) out.push('complete');
  return out;
}

interface Playlist { sequence: number; entries: Array<{ uri: string; duration: number }> }
function parsePlaylist(text: string): Playlist {
  const sequence = Number(/^#EXT-X-MEDIA-SEQUENCE:(\d+)/m.exec(text)?.[1] ?? 0);
  const entries: Playlist['entries'] = [];
  let duration = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#')) entries.push({ uri: line.trim(), duration });
  }
  return { sequence, entries };
}

/** One ad of one viewer's break as its playlists showed it: the segments' durations, and whether it is seen whole. */
interface AdTrack { durations: number[]; closed: boolean }

class Viewer {
  node: EngineProcess;
  readonly home: EngineProcess;
  requests = 0;
  failures = 0;
  /** the uri listed at each media sequence number */
  readonly uriAt = new Map<number, string>();
  sequence = -1;
  /** the playlist went back in numbering, or a listed segment changed its URI */
  backwards = 0;
  renamed: string[] = [];
  /** the highest media sequence number whose segment was fetched (or skipped at join) */
  fetchedUpTo = -1;
  /** the ad segments fetched: uri → [when, from which process, answered] */
  readonly fetched = new Map<string, { at: number; from: string; ok: boolean }>();
  readonly tracks = new Map<string, AdTrack>();
  /** when a request to the killed process first failed, and when the survivor first answered after the kill */
  failedAt: number | undefined;
  answeredAgainAt: number | undefined;
  lastPlaylist: Playlist | undefined;
  lastPlaylistAt = 0;
  /** the last failed answer, for the report of a run that went wrong */
  lastFailure = '';
  /** when a reload after the kill first showed the break it was in played through (its ads, then content, all fetched) */
  throughAt: number | undefined;

  constructor(readonly index: number, readonly sid: string, readonly path: string, home: EngineProcess) {
    this.node = home;
    this.home = home;
  }
}

export interface KillSsaiEvidence {
  victim: string;
  survivor: string;
  viewers: number;
  /** failed requests of the survivor's own viewers (must be 0), and of the re-pointed ones (the refused ones) */
  survivorViewerFailures: number;
  repointedFailures: number;
  /** re-pointed viewers the survivor never answered */
  neverAnsweredAgain: number;
  backwards: number;
  renamed: string[];
  /** viewers whose playlists from the survivor name another session (must be none) */
  sessionChanged: number;
  /** beacons the ad server counted more than once, and the events expected from the fetched segments that never came */
  beaconsDoubled: number;
  beaconsLost: number;
  /** of the lost: the ones whose segment the killed process had answered (fired at most once: marked, then in flight) */
  beaconsLostOnVictim: number;
  beaconsExpected: number;
  /** ad segments fetched, and of those from the survivor by re-pointed viewers */
  adSegmentsFetched: number;
  adSegmentsAfterRepoint: number;
  deadSurvivors: string[];
}

const quantile = (values: number[], q: number): number => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

export interface KillSsaiOptions extends FaultScenarioOptions {
  /**
   * The origin's cues: 'cue-out' (no notice: every viewer's decision at the break's start, the test's) or
   * 'daterange-ahead' (announced: decided ahead, what a loaded machine needs at a thousand viewers)
   */
  cueForm?: 'cue-out' | 'daterange-ahead';
}

export async function killSsaiScenario(options: KillSsaiOptions): Promise<FaultFigures & { evidence: KillSsaiEvidence }> {
  const log = options.log ?? (() => undefined);
  const [origin, vast, cluster] = await Promise.all([
    OriginServer.start({ cueForm: options.cueForm ?? 'cue-out', realTime: true }), VastServer.start(), startOutageCluster({ ssai: 2, workers: 1, logsToFiles: options.viewers > 300 }),
  ]) as [OriginServer, VastServer, OutageCluster];
  const agent = new Agent({ connections: 256, headersTimeout: 15_000, bodyTimeout: 15_000, connect: { timeout: 5_000 } });
  const viewers: Viewer[] = [];
  let stopped = false;
  const loops: Array<Promise<void>> = [];
  try {
    const made = await request(`${cluster.balancer.url}/broker/adinserts`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...cluster.auth },
      body: JSON.stringify({ name: 'kill-ssai', type: 'live', ad_server: `${vast.url}/vast-viewer?sid=[session.id]-[avail.random]`, source_url: `${origin.url}/` }),
    });
    if (made.status !== 200) throw new Error(`the ad insertion configuration was refused: ${made.status} ${made.text}`);
    const guid = (JSON.parse(made.text) as { guid: string }).guid;
    const [victim, survivor] = cluster.ssai as [EngineProcess, EngineProcess];

    // A first viewer's break has the worker prepare the creatives (that break plays content meanwhile).
    const join = async (node: EngineProcess): Promise<{ sid: string; path: string }> => {
      const master = await request(`${node.url}/v1/master/${guid}/live/master.m3u8`);
      if (master.status !== 200) throw new Error(`master playlist from ${node.name}: ${master.status} ${master.text}`);
      const variant = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`) && u.startsWith('/v1/manifest/'));
      if (!variant) throw new Error(`no stitched video variant in ${master.text}`);
      return { sid: variant.split('/')[4]!, path: variant };
    };
    const first = await join(victim);
    await until('the worker to prepare both creatives', 180_000, async () => {
      await request(`${victim.url}${first.path}`).catch(() => undefined);
      return cluster.workers.flatMap((p) => p.logs).filter((l) => l.includes('"creative prepared"')).length >= 2 ? true : undefined;
    });
    log('creatives prepared');

    // The viewers: half on each process, each its own session (made 32 at a time).
    for (let i = 0; i < options.viewers; i += 32) {
      const batch = await Promise.all(Array.from({ length: Math.min(32, options.viewers - i) }, (_, k) => {
        const home = cluster.ssai[(i + k) % 2]!;
        return join(home).then((s) => new Viewer(i + k, s.sid, s.path, home));
      }));
      viewers.push(...batch);
    }
    log(`${viewers.length} sessions made`);

    let killedAt: number | undefined;
    let throughBreak: ((v: Viewer) => boolean) | undefined;
    const get = async (url: string): Promise<{ status: number; text: string }> => {
      const r = await undiciRequest(url, { dispatcher: agent });
      return { status: r.statusCode, text: await r.body.text() };
    };
    // A refused or reset connection to the killed process: the viewer goes to the survivor, as a load balancer would.
    const repoint = (v: Viewer): boolean => {
      if (v.node !== victim || killedAt === undefined) return false;
      v.failedAt ??= Date.now();
      v.node = survivor;
      return true;
    };
    const fetchSegment = async (v: Viewer, uri: string): Promise<void> => {
      for (;;) {
        const from = v.node;
        v.requests++;
        try {
          const r = await get(`${from.url}${uri}`);
          v.fetched.set(uri, { at: Date.now(), from: from.name, ok: r.status === 302 });
          if (r.status !== 302) { v.failures++; v.lastFailure = `${from.name} segment ${r.status} ${r.text.slice(0, 200)}`; }
          return;
        } catch {
          v.failures++;
          if (!repoint(v)) { v.fetched.set(uri, { at: Date.now(), from: from.name, ok: false }); return; }
        }
      }
    };
    const reload = async (v: Viewer): Promise<void> => {
      let answer: { status: number; text: string } | undefined;
      for (;;) {
        v.requests++;
        try {
          answer = await get(`${v.node.url}${v.path}`);
          if (answer.status !== 200) { v.failures++; v.lastFailure = `${v.node.name} ${answer.status} ${answer.text.slice(0, 200)}`; return; }
          break;
        } catch {
          v.failures++;
          if (!repoint(v)) return;
        }
      }
      if (killedAt !== undefined && v.home === victim && v.node === survivor) v.answeredAgainAt ??= Date.now();
      const playlist = parsePlaylist(answer.text);
      if (playlist.sequence < v.sequence) v.backwards++;
      v.sequence = playlist.sequence;
      playlist.entries.forEach((e, i) => {
        const msn = playlist.sequence + i;
        const known = v.uriAt.get(msn);
        if (known !== undefined && known !== e.uri && v.renamed.length < 5) v.renamed.push(`${v.sid} #${msn}: ${known} became ${e.uri}`);
        v.uriAt.set(msn, e.uri);
        const ad = adSegmentOf(e.uri);
        if (!ad) return;
        const key = `${ad.avail}/${ad.adIndex}`;
        const track = v.tracks.get(key) ?? { durations: [], closed: false };
        track.durations[ad.segIndex] = e.duration;
        const next = playlist.entries[i + 1];
        const nextAd = next ? adSegmentOf(next.uri) : undefined;
        if (next && (!nextAd || `${nextAd.avail}/${nextAd.adIndex}` !== key)) track.closed = true;
        v.tracks.set(key, track);
      });
      v.lastPlaylist = playlist;
      v.lastPlaylistAt = Date.now();
      // as a player: at join it starts three segments from the live edge, then fetches each new one in order
      const last = playlist.sequence + playlist.entries.length - 1;
      if (v.fetchedUpTo < 0) v.fetchedUpTo = last - 3;
      for (let msn = Math.max(v.fetchedUpTo + 1, playlist.sequence); msn <= last; msn++) {
        const uri = playlist.entries[msn - playlist.sequence]!.uri;
        if (uri.startsWith('/v1/segment/')) await fetchSegment(v, uri);
      }
      v.fetchedUpTo = Math.max(v.fetchedUpTo, last);
      // Latched when it happens: the break slides out of the window soon after, and a thousand viewers at their own
      // phases need not all show it at one instant (a check of every viewer at once timed out with every one past it).
      if (v.throughAt === undefined && throughBreak?.(v)) v.throughAt = Date.now();
    };
    const started = Date.now();
    for (const v of viewers) {
      const phase = (v.index * TARGET_MS) / viewers.length;
      loops.push((async () => {
        await new Promise((r) => setTimeout(r, phase));
        for (let round = 0; !stopped; round++) {
          await reload(v);
          const wait = started + phase + (round + 1) * TARGET_MS - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      })());
    }

    // Killed mid-break: half the viewers have fetched an ad segment of a break their playlist still ends in.
    const inBreak = (v: Viewer): string | undefined => {
      const lastEntry = v.lastPlaylist?.entries.at(-1);
      const ad = lastEntry ? adSegmentOf(lastEntry.uri) : undefined;
      if (!ad) return undefined;
      return [...v.fetched.keys()].some((u) => adSegmentOf(u)?.avail === ad.avail) ? ad.avail : undefined;
    };
    await until('half the viewers to be playing the ads of a break', 120_000, async () =>
      viewers.filter((v) => inBreak(v) !== undefined).length >= viewers.length / 2 ? true : undefined).catch((error: unknown) => {
      const withAds = viewers.filter((v) => v.lastPlaylist?.entries.some((e) => adSegmentOf(e.uri))).length;
      const failing = viewers.filter((v) => v.failures > 0);
      throw new Error(`${(error as Error).message}: ${withAds} of ${viewers.length} playlists hold ads, ${viewers.filter((v) => inBreak(v)).length} in a break, `
        + `${failing.length} viewers with failures (e.g. ${failing[0]?.lastFailure}), oldest playlist ${Math.max(...viewers.map((v) => Date.now() - v.lastPlaylistAt))} ms old, `
        + `${vast.requests.length} ad requests`);
    });
    const killBreak = new Map(viewers.map((v) => [v, inBreak(v)]));
    killedAt = Date.now();
    await victim.kill();
    log(`killed ${victim.name} with ${viewers.filter((v) => killBreak.get(v)).length} viewers in a break`);

    // Until every viewer has played that break through: a playlist after the kill where its ads are followed by content.
    throughBreak = (v: Viewer): boolean => {
      // (a viewer not yet in the break at the kill: the first break it fetched ads of after it)
      const avail = killBreak.get(v) ?? adSegmentOf([...v.fetched].find(([, got]) => got.at > killedAt!)?.[0] ?? '')?.avail;
      if (!avail || v.lastPlaylistAt <= killedAt!) return false;
      const entries = v.lastPlaylist!.entries;
      const at = entries.map((e) => adSegmentOf(e.uri)?.avail).lastIndexOf(avail);
      return at >= 0 && at < entries.length - 1 && v.fetchedUpTo >= v.lastPlaylist!.sequence + entries.length - 1;
    };
    await until('every viewer to play its break through', 120_000, async () => viewers.every((v) => v.throughAt !== undefined) ? true : undefined).catch((error: unknown) => {
      const behind = viewers.filter((v) => v.throughAt === undefined);
      const sample = behind.slice(0, 3).map((v) => ({
        home: v.home.name, node: v.node.name, killBreak: killBreak.get(v), failures: v.failures, lastFailure: v.lastFailure,
        sinceLastPlaylistMs: Date.now() - v.lastPlaylistAt, fetchedUpTo: v.fetchedUpTo, playlist: v.lastPlaylist,
      }));
      throw new Error(`${(error as Error).message}: ${behind.length} viewers behind, e.g. ${JSON.stringify(sample, null, 1)}`);
    });
    stopped = true;
    await Promise.all(loops);
    log('every viewer played the break through');

    // The beacons expected from the segments fetched (the ads whose every segment the playlists showed), against the ad server's counts.
    const expected = new Map<string, { count: number; onVictim: number }>();
    let adSegmentsFetched = 0;
    let adSegmentsAfterRepoint = 0;
    for (const v of viewers) {
      for (const [uri, got] of v.fetched) {
        if (!got.ok) continue;
        adSegmentsFetched++;
        if (v.home === victim && got.from === survivor.name) adSegmentsAfterRepoint++;
        const ad = adSegmentOf(uri)!;
        const track = v.tracks.get(`${ad.avail}/${ad.adIndex}`);
        if (!track?.closed || track.durations.length !== Object.keys(track.durations).length) continue;
        for (const event of eventsOfSegment(ad.segIndex, track.durations)) {
          const key = `${event}:${AD_NAMES[ad.adIndex]}-${ad.sid}`;
          const known = expected.get(key);
          expected.set(key, { count: (known?.count ?? 0) + 1, onVictim: (known?.onVictim ?? 0) + (got.from === victim.name ? 1 : 0) });
        }
      }
    }
    const counted = () => [...vast.beacons.values()].reduce((a, b) => a + b, 0);
    // The ad server counts by event and ad id, and a viewer's ad ids carry its session and the break's [avail.random]:
    // a count above 1 is a beacon fired twice; a viewer's events summed over its breaks, against those expected.
    const countedFor = (key: string): number => {
      let n = 0;
      for (const [k, c] of vast.beacons) if (k.startsWith(`${key}-`)) n += c;
      return n;
    };
    // every expected beacon arrived, or none more for 5 s (the sender retries within ~1 s; a lost one never comes)
    let lastCount = -1;
    let quietSince = Date.now();
    await until('the beacons to settle', 60_000, async () => {
      const now = counted();
      if (now !== lastCount) { lastCount = now; quietSince = Date.now(); }
      const arrived = [...expected].every(([k, { count }]) => countedFor(k) >= count);
      return arrived || Date.now() - quietSince > 5_000 ? true : undefined;
    });
    let beaconsLost = 0;
    let beaconsLostOnVictim = 0;
    for (const [key, { count, onVictim }] of expected) {
      const missing = Math.max(0, count - countedFor(key));
      beaconsLost += missing;
      // (at most as many as that viewer's events of this kind the killed process answered)
      beaconsLostOnVictim += Math.min(missing, onVictim);
    }
    const beaconsDoubled = [...vast.beacons.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);

    const repointed = viewers.filter((v) => v.home === victim);
    const stayed = viewers.filter((v) => v.home === survivor);
    const sessionChanged = viewers.filter((v) => [...v.uriAt.values()].some((u) => { const ad = adSegmentOf(u); return ad !== undefined && ad.sid !== v.sid; })).length;
    const recovered = repointed.filter((v) => v.answeredAgainAt !== undefined).map((v) => v.answeredAgainAt! - killedAt!);
    const gaps = repointed.filter((v) => v.answeredAgainAt !== undefined && v.failedAt !== undefined).map((v) => v.answeredAgainAt! - v.failedAt!);
    const requestsTotal = viewers.reduce((s, v) => s + v.requests, 0);
    const requestsFailed = viewers.reduce((s, v) => s + v.failures, 0);
    const evidence: KillSsaiEvidence = {
      victim: victim.name,
      survivor: survivor.name,
      viewers: viewers.length,
      survivorViewerFailures: stayed.reduce((s, v) => s + v.failures, 0),
      repointedFailures: repointed.reduce((s, v) => s + v.failures, 0),
      neverAnsweredAgain: repointed.length - recovered.length,
      backwards: viewers.reduce((s, v) => s + v.backwards, 0),
      renamed: viewers.flatMap((v) => v.renamed),
      sessionChanged,
      beaconsDoubled,
      beaconsLost,
      beaconsLostOnVictim,
      beaconsExpected: [...expected.values()].reduce((a, b) => a + b.count, 0),
      adSegmentsFetched,
      adSegmentsAfterRepoint,
      deadSurvivors: cluster.all.filter((p) => p !== victim && !alive(p)).map((p) => p.name),
    };
    return {
      fault: 'kill -9 of one ssai process',
      recoverSeconds: recovered.length ? Math.max(...recovered) / 1000 : null,
      requestsFailed,
      requestsTotal,
      recordsLost: beaconsDoubled + beaconsLost + sessionChanged + evidence.renamed.length,
      details: {
        viewers: viewers.length,
        cueForm: options.cueForm ?? 'cue-out',
        repointedViewers: repointed.length,
        recoverP50Ms: quantile(recovered, 0.5),
        recoverMaxMs: recovered.length ? Math.max(...recovered) : -1,
        gapAfterFirstFailureMaxMs: gaps.length ? Math.max(...gaps) : -1,
        survivorViewerFailures: evidence.survivorViewerFailures,
        beaconsExpected: [...expected.values()].reduce((a, b) => a + b.count, 0),
        beaconsCounted: counted(),
        beaconsDoubled,
        beaconsLost,
        beaconsLostOnVictim,
        adSegmentsFetched,
      },
      evidence,
    };
  } finally {
    stopped = true;
    await Promise.allSettled(loops);
    await agent.close().catch(() => undefined);
    await cluster.close();
    await Promise.all([origin.close(), vast.close()]);
  }
}
