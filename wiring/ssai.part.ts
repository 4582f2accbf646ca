// SSAI: ad-insertion configurations (spec 2.11, 4.6) on the api role, and the /v1 playback proxy on the ssai role.
import type { EnginePart } from '../kernel/part.js';
import type { EngineContext } from '../kernel/context.js';
import { AdinsertStore } from '../src/adinserts/adinsert.store.js';
import { CachedAdinsertLookup, organizationLookup } from '../src/adinserts/adinsert-lookup.js';
import { adinsertRoutes } from '../src/adinserts/adinsert.router.js';
import path from 'node:path';
import { Counter, Gauge } from 'prom-client';
import { AdPlanner } from '../ssai/decide/ad-planner.js';
import { mediaStoreUrl } from '../ssai/stitch/creative-plan.js';
import type { PrepareFn } from '../ssai/decide/creative-cache.js';
import type { PrepareSlateFn } from '../ssai/decide/slate-fill.js';
import { localSlatePreparer, slateImageFrom } from '../ssai/decide/slate.js';
import { BeaconSender } from '../ssai/serve/beacons.js';
import { ThreadedBeaconDelivery } from '../ssai/serve/beacon-thread.js';
import { registerThreadMetrics } from '../ssai/serve/thread-metrics.js';
import { createSsaiMetrics, type SsaiMetrics } from '../ssai/metrics.js';
import { OriginFetcher } from '../ssai/serve/origin-fetcher.js';
import { createSessionStore, type SessionStore } from '../ssai/store/session-store.js';
import { SsaiServer } from '../ssai/serve/server.js';
import { VastDecisionClient, type AdDecisionClient } from '../ssai/decide/vast-decision.js';
import { ThreadedDecisionClient } from '../ssai/decide/decision-threads.js';
import { DebugLog } from '../ssai/store/debug-log.js';
import { DebugDecisions } from '../ssai/decide/debug-decisions.js';
import type { Authenticate } from '../ssai/serve/debug-route.js';
import { resolvePrincipal } from '../src/auth/authenticate.js';
import { isEngineError } from '../kernel/core/errors.js';

// ctx.services.adinserts and ctx.services.adinsertLookup are declared in src/adinserts/adinsert-lookup.ts.
declare module '../kernel/context.js' {
  interface EngineServices {
    ssai?: SsaiRuntime;
  }
}

/** What tests and benchmarks reach into. */
export interface SsaiRuntime {
  store: SessionStore;
  planner: AdPlanner;
  beacons: BeaconSender;
  origin: OriginFetcher;
  metrics: SsaiMetrics;
  /** debug sessions' logs (issue 31 item 8) */
  debugLog: DebugLog;
}

export interface SsaiPartOptions {
  /**
   * reuse of an origin playlist, ms; default: aligned to the origin's refresh (one fetch per target duration, see
   * OriginFetcher); tests use 0 to move the live window by hand
   */
  originCacheMs?: number;
  originTimeoutMs?: number;
  /** how long the first playlist of an avail waits for a creative being prepared (default 200 ms) */
  creativeWaitMs?: number;
  sessionTtlMs?: number;
  decision?: AdDecisionClient;
  /** replaces ctx.services.prepareCreative */
  prepare?: PrepareFn;
  /** replaces the in-process slate preparer */
  prepareSlate?: PrepareSlateFn;
  beaconTimeoutMs?: number;
  /** how long a playlist waits for the ad decision of a break in its window before the break plays slate (default 1500 ms) */
  decisionDeadlineMs?: number;
  /**
   * A plain live reload ends before a break whose decision is still running instead of waiting for it (issue 28
   * point 2; ssai/serve/server.ts cutBefore, cutRoomMs). On by default; false makes every such playlist wait for its
   * decision (the deadline at most). SSAI_TEST_CUT=0 runs the proxy tests (test/ssai/setup.ts) and
   * test/e2e/linear-{playback,ads-reloads}.test.ts without it.
   */
  cutBeforeUndecidedBreaks?: boolean;
}

export function createSsaiPart(options: SsaiPartOptions = {}): EnginePart {
  /** each engine's proxy (one part object serves every engine of a process: tests start several) */
  const servers = new WeakMap<EngineContext, SsaiServer>();
  return {
    name: 'ssai',
    roles: ['api', 'ssai'],
    init: (ctx) => {
      const store = new AdinsertStore(ctx.store.db);
      const cache = new CachedAdinsertLookup(store);
      ctx.services.adinserts = cache;
      // The live channels' organization-scoped read (src/channels/channel.view.ts).
      ctx.services.adinsertLookup = organizationLookup(cache);
      if (!ctx.config.roles.includes('ssai')) return;
      const metrics = createSsaiMetrics(ctx.metrics.registry);
      // Round trips to Redis per playlist are the cost of scale-out (issue 20, bench/cluster reads this counter).
      const redisRoundTrips = new Counter({ name: 'ssai_redis_round_trips_total', help: 'Requests the proxy made to Redis (a MULTI counts once)', registers: [ctx.metrics.registry] });
      const sessions = createSessionStore(ctx.config.redisUrl, `${ctx.config.redisPrefix}ssai:`, () => redisRoundTrips.inc(), ctx.logger.child({ component: 'ssai' }));
      const origin = new OriginFetcher({
        ...(options.originCacheMs !== undefined ? { cacheMs: options.originCacheMs } : {}), timeoutMs: options.originTimeoutMs ?? 2000,
        onFetch: () => metrics.originFetches.inc(), onError: (reason) => metrics.originErrors.inc({ reason }),
      });
      // The ad server requests and VAST parsing of personal decisions run on threads beside the playlists' event loop,
      // and so do the beacons' HTTP requests (one thread); SSAI_DECISION_THREADS=0 keeps both on this one.
      const threads = ctx.config.ssaiDecisionThreads;
      const beaconTimeoutMs = options.beaconTimeoutMs ?? 2000;
      const beaconThread = threads === 0 ? undefined : new ThreadedBeaconDelivery({
        timeoutMs: beaconTimeoutMs, nice: ctx.config.ssaiBeaconNice, onResult: (result, n) => metrics.beacons.inc({ result }, n),
        onLost: (error, urls) => ctx.logger.warn({ component: 'ssai', error, urls }, 'the beacon thread ended: its beacons not yet sent count as failed'),
      });
      const beacons = new BeaconSender(sessions, {
        timeoutMs: beaconTimeoutMs, onResult: (result) => metrics.beacons.inc({ result }),
        onStoreUnavailable: () => metrics.storeUnavailable.inc({ operation: 'beacon' }),
        ...(beaconThread ? { transport: beaconThread } : {}),
      });
      const threaded = options.decision || threads === 0 ? undefined : new ThreadedDecisionClient({ threads, nice: ctx.config.ssaiDecisionNice });
      // The threads' heaps are their own (nodejs_heap_* is the main thread's): asked at each scrape, a busy thread
      // left out after a second rather than holding the scrape.
      new Gauge({
        name: 'ssai_thread_heap_used_bytes', help: 'Heap in use on each of the proxy\'s worker threads (decisions, beacons), as the thread reports it', labelNames: ['thread'] as const, registers: [ctx.metrics.registry],
        async collect() {
          this.reset();
          const within = <T>(asked: Promise<T>, fallback: T): Promise<T> => Promise.race([asked, new Promise<T>((resolve) => setTimeout(resolve, 1000, fallback).unref())]);
          const [decisions, beaconHeap] = await Promise.all([within(threaded?.threadHeapsUsed() ?? Promise.resolve([]), []), within(beaconThread?.threadHeapUsed() ?? Promise.resolve(0), 0)]);
          decisions.forEach((bytes, i) => { if (bytes > 0) this.set({ thread: `decisions-${i}` }, bytes); });
          if (beaconHeap > 0) this.set({ thread: 'beacons' }, beaconHeap);
        },
      });
      registerThreadMetrics(ctx.metrics.registry, () => [...threaded?.threadIds() ?? [], ...beaconThread?.threadIds() ?? []]);
      const debugLog = new DebugLog({ store: sessions, logger: ctx.logger.child({ component: 'ssai' }), metrics, now: () => ctx.clock.nowMs() });
      // A debug session's decisions run on this thread through a client that shows the log each ad server exchange
      // (a decision client given in the options is kept: then only the decisions are logged).
      const debug = new DebugDecisions(debugLog, options.decision ? undefined : (observe) => new VastDecisionClient({ observe }));
      const planner = new AdPlanner({
        decision: options.decision ?? threaded ?? new VastDecisionClient(),
        store: sessions,
        prepare: () => options.prepare ?? prepareFromServices(ctx),
        creativeUrl: (dir, rel) => {
          const vod = ctx.services.vod;
          return vod ? mediaStoreUrl(vod.mediaDir, () => vod.mediaBaseUrl())(dir, rel) : undefined;
        },
        metrics, logger: ctx.logger.child({ component: 'ssai' }), now: () => ctx.clock.nowMs(),
        creativeWaitMs: options.creativeWaitMs ?? 200, sessionTtlMs: options.sessionTtlMs ?? 4 * 3_600_000,
        slateImage: slateImageFrom(cache),
        prepareSlate: () => options.prepareSlate ?? localSlateFromServices(ctx),
        debug,
        // A decision's VAST errors go out with the beacons (issue 31 point 7).
        sendErrorBeacons: (urls) => beacons.sendOnce(urls),
      });
      ctx.services.ssai = { store: sessions, planner, beacons, origin, metrics, debugLog };
      ctx.onClose(async () => {
        await beacons.close();
        await origin.close();
        await sessions.close();
        await threaded?.close();
      });
    },
    routes: (ctx) => {
      const lookup = ctx.services.adinserts;
      if (!lookup) throw new Error('the ssai part was not initialized');
      return adinsertRoutes(ctx, new AdinsertStore(ctx.store.db), lookup);
    },
    rawHandler: (ctx: EngineContext) => {
      const runtime = ctx.services.ssai;
      const lookup = ctx.services.adinserts;
      if (!runtime || !lookup) return () => false;
      const server = new SsaiServer({
        lookup, origin: runtime.origin, store: runtime.store, planner: runtime.planner, beacons: runtime.beacons,
        metrics: runtime.metrics, logger: ctx.logger.child({ component: 'ssai' }), now: () => ctx.clock.nowMs(),
        sessionTtlMs: options.sessionTtlMs ?? 4 * 3_600_000, decisionDeadlineMs: options.decisionDeadlineMs ?? 1500,
        cutBeforeUndecidedBreaks: options.cutBeforeUndecidedBreaks !== false,
        publicUrl: () => ctx.config.publicUrl,
        debugLog: runtime.debugLog, authenticate: authenticateFor(ctx),
      });
      servers.set(ctx, server);
      return server.handler();
    },
    // (the same SsaiServer as the rawHandler's: the engine asks for the rawHandler first)
    fastGet: (ctx: EngineContext) => servers.get(ctx)?.fastGet(),
  };
}

/**
 * Credentials checked as the control API checks them (src/auth/authenticate.ts, 'either': an ID token or an API key):
 * every process, whatever its roles, has the token service and the API keys over the shared database, so an ssai-only
 * process verifies the same tokens the api process signs.
 */
function authenticateFor(ctx: EngineContext): Authenticate {
  return async (headers) => {
    try {
      const principal = await resolvePrincipal(ctx, headers, 'either');
      if (!principal) return { status: 401, code: 'UNAUTHENTICATED', description: 'no credentials were sent' };
      return { organizationId: principal.organizationId, permissions: principal.permissions };
    } catch (e) {
      if (isEngineError(e)) return { status: e.status, code: e.code, description: e.message };
      throw e;
    }
  };
}

function prepareFromServices(ctx: EngineContext): PrepareFn | undefined {
  const prepare = ctx.services.prepareCreative;
  return prepare ? (url, ladder, creativeId) => prepare(url, ladder, { creativeId }) : undefined;
}

/** Slate is prepared where the media store is (the slate must be served from it), with prepareSlate's disk cache. */
function localSlateFromServices(ctx: EngineContext): PrepareSlateFn | undefined {
  const vod = ctx.services.vod;
  return vod ? localSlatePreparer({ cacheDir: path.join(vod.mediaDir, 'creatives'), logger: ctx.logger.child({ component: 'ssai-slate' }) }) : undefined;
}

export const ssaiPart: EnginePart = createSsaiPart();
