// Fault 4 of the campaign (issue 32): Redis restarted, then PostgreSQL restarted, each while the whole load runs
// (campaign-load.ts) on the campaign cluster (api, two ssai, two workers, two packagers on private stores). Redis is
// shut down without saving and a fresh, empty server started on its port; PostgreSQL is stopped with pg_ctl -m fast
// (57P01 on every connection, as a maintenance restart) and started again. An encode is uploaded just before each
// restart, so one is queued or running across it. Measured: seconds until each store's work is back (the next break
// filled after Redis; the API answering 200 after PostgreSQL), requests failed by kind, and what was lost or doubled:
// records written before, encodes not complete exactly once, notifications due but not delivered exactly once.
import { alive, startOutageCluster, type OutageCluster } from '../outage-cluster.js';
import { sleep, until } from '../../cluster/cluster.js';
import { CampaignLoad, type Recorded } from './campaign-load.js';
import type { FaultFigures, FaultScenario, FaultScenarioOptions } from './fault-figures.js';

export interface StoreRestartOptions {
  /** how long each store stays down before it is started again (a restart: a few seconds) */
  outageSeconds?: number;
  /** configurations written before the restarts, looked up after them */
  recordsBefore?: number;
}

/** What the test asserts beyond the figures: the facts behind them. */
export interface StoreRestartReport {
  figures: FaultFigures;
  /** processes that exited, with their last log lines */
  exited: string[];
  /** store errors caught by the process-wide safety net (wiring/cli.ts): each should have been handled where it happened */
  unhandled: string[];
  /** failed answers by kind, during and after each restart */
  failures: Record<string, number>;
  /** segment answers that failed and were tried again (a player's retries), by kind, status and when */
  retried: Record<string, number>;
  retriedAt: string[];
  /** the channel's status at the end, its last segment number at the PostgreSQL restart and at the end, regressions seen */
  channel: { status: string | undefined; segmentAtRestart: number; segmentAtEnd: number; regressions: number };
  /** per encode uploaded across a restart: its status, its completions logged by the workers, its completion notifications */
  encodes: Array<{ guid: string; across: string; status: string | undefined; completionsLogged: number; notified: number }>;
  /** notifications in the outbox at the end: not yet delivered; delivered but never received; received twice */
  notifications: { due: number; pending: number; missing: number; doubled: number };
  /** records written before the restarts and missing after */
  recordsMissing: number;
  fill: number | null;
}

const API_PROBE_MS = 500;

async function storeRestartsRun(options: FaultScenarioOptions & StoreRestartOptions): Promise<StoreRestartReport> {
  const outageMs = (options.outageSeconds ?? 5) * 1000;
  const log = options.log ?? (() => undefined);
  const cluster: OutageCluster = await startOutageCluster({
    ssai: 2, workers: 2, packager: 2, logsToFiles: options.viewers > 50, env: { NOTIFY_HTTP_LOOPBACK: 'true' }, startTimeoutMs: 300_000,
  });
  let load: CampaignLoad | undefined;
  let probing = true;
  let probe: Promise<void> = Promise.resolve();
  try {
    load = await CampaignLoad.start(cluster, { viewers: options.viewers, log, keepAnswers: options.viewers <= 50, worldInChild: options.viewers > 50 });
    const l = load;
    log('waiting for the first stitched break (the workers prepare the creatives)');
    await l.waitForAds();
    // An API client reading configurations twice a second through the balancer: when the API is back after PostgreSQL.
    probe = (async () => {
      while (probing) {
        await l.api('GET', '/broker/adinserts');
        await sleep(API_PROBE_MS);
      }
    })();

    // Records written before the restarts (answered 2xx: committed), and an encode finished before them.
    const written: string[] = [];
    for (let i = 0; i < (options.recordsBefore ?? 10); i++) {
      const made = await l.api('POST', '/broker/adinserts', { name: `written before the restarts ${i}`, type: 'live', ad_server: `${l.world.vastUrl}/vast3`, source_url: `${l.world.originUrl}/` });
      if (made.status !== 200) throw new Error(`a write before the restarts answered ${made.status}: ${made.text}`);
      written.push((JSON.parse(made.text) as { guid: string }).guid);
    }
    const before = await l.upload('finished before the restarts');
    await until('the encode before the restarts to complete', 180_000, async () => ((await l.encodeStatus(before)) === 'complete' ? true : undefined));
    written.push(before);
    const across: Array<{ guid: string; across: string }> = [];

    /** One store down for the outage with an encode uploaded across it; when it was down and up, and how long until `back`. */
    const outage = async (name: 'Redis' | 'PostgreSQL', store: { stopServer(): Promise<void>; startServer(): Promise<void> }, back: string, isBack: () => Promise<boolean>) => {
      across.push({ guid: await l.upload(`across the ${name} restart`), across: name });
      log(`${name} down for ${outageMs / 1000} s`);
      const down = Date.now();
      await store.stopServer();
      await sleep(outageMs);
      await store.startServer();
      const up = Date.now();
      await until(`${back} after ${name} returned`, 180_000, async () => ((await isBack()) ? true : undefined));
      const recover = (Date.now() - up) / 1000;
      log(`${name} back: ${back} ${recover.toFixed(1)} s after its return`);
      return { down, up, recover };
    };
    // Redis: shut down without saving, a fresh server on the same port after the outage. Back when a break decided
    // after the return is filled: the fill counters of the ssai processes move again.
    const filledAtRedisStop = (await l.fill()).filledSeconds;
    const { down: redisDown, up: redisUp, recover: redisRecover } = await outage('Redis', cluster.redis, 'a break filled',
      async () => (await l.fill()).filledSeconds > filledAtRedisStop);
    // PostgreSQL: pg_ctl stop -m fast, started again after the outage.
    const segmentAtRestart = l.channelLastSegment;
    const { down: pgDown, up: pgUp, recover: pgRecover } = await outage('PostgreSQL', cluster.postgres, 'the API answers 200',
      async () => (await l.api('GET', '/broker/adinserts')).status === 200);

    // Everything in flight finishes: the encodes, then their notifications (and every other one due).
    for (const encode of across) {
      await until(`the encode uploaded across the ${encode.across} restart to finish`, 240_000, async () => {
        const status = await l.encodeStatus(encode.guid);
        return status === 'complete' || status === 'failed' || status === 'error' ? true : undefined;
      }).catch(async (error: unknown) => {
        // what the workers said of jobs, for the failure's reader (a loaded run failed here once, its reason unread)
        const said = cluster.all.flatMap((p) => p.logs).filter((line) => line.includes(encode.guid) || /"job|lease|pg-boss/.test(line)).slice(-40);
        throw new Error(`${String(error)}; its status: ${await l.encodeStatus(encode.guid)}; the workers' job lines:\n${said.join('\n')}`);
      });
    }
    await until('every notification due to be delivered', 120_000, async () => {
      const [row] = await cluster.postgres.query<{ n: string }>(`select count(*) as n from notification_outbox where status = 'pending'`);
      return Number(row?.n) === 0 ? true : undefined;
    });
    // the channel keeps making segments after the restarts
    const segmentAfterReturn = l.channelLastSegment;
    await until('the channel to make a segment after the restarts', 60_000, async () => (l.channelLastSegment > segmentAfterReturn ? true : undefined));
    probing = false;
    await probe;
    await l.stop();

    const due = await cluster.postgres.query<{ id: string; status: string }>(`select id, status from notification_outbox where kind <> 'SubscriptionConfirmation'`);
    const { byMessage, doubled } = l.deliveries();
    // after the wait above, a message not delivered is one given up (failed): lost
    const pending = due.filter((r) => r.status !== 'delivered').length;
    const missing = due.filter((r) => r.status === 'delivered' && !byMessage.has(r.id)).length;
    const logs = cluster.all.flatMap((p) => p.logs);
    const encodes = [];
    for (const encode of across) {
      encodes.push({
        ...encode,
        status: await l.encodeStatus(encode.guid),
        completionsLogged: logs.filter((line) => line.includes('"VOD encode complete"') && line.includes(encode.guid)).length,
        notified: new Set(l.receiver.notifications('vod.encode.complete').filter((r) => r.json.Data?.guid === encode.guid).map((r) => r.json.MessageId)).size,
      });
    }
    const listed = (await l.api('GET', '/broker/adinserts')).text;
    const vodListed = await Promise.all(written.filter((g) => !listed.includes(g)).map(async (g) => ((await l.encodeStatus(g)) === 'complete' ? 0 : 1)));
    const recordsMissing = vodListed.reduce<number>((a, b) => a + b, 0);
    const channelRead = await l.api('GET', `/channels/${l.channelId}`);
    const channelStatus = channelRead.status === 200 ? (JSON.parse(channelRead.text) as { channelStatus: string }).channelStatus : undefined;
    const { availSeconds, filledSeconds } = await l.fill();

    const during = (from: number, to: number) => (r: { at: number }) => r.at >= from && r.at < to;
    const byKind = (list: Recorded[]): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const f of list) {
        // an outage lasts until the engine is back on the store (its clients reconnect with a backoff), not only while
        // the server is down
        const when = during(redisDown, redisUp + redisRecover * 1000 + 1)(f) ? 'during the Redis outage' : during(pgDown, pgUp + pgRecover * 1000 + 1)(f) ? 'during the PostgreSQL outage' : 'outside the outages';
        const key = `${f.kind} ${f.status === 0 ? 'no answer' : f.status}${f.code ? ` ${f.code}` : ''} ${when}`;
        out[key] = (out[key] ?? 0) + 1;
      }
      return out;
    };
    const failures = byKind(l.failures);
    const viewerFailures = l.failures.filter((f) => f.kind === 'playlist' || f.kind === 'segment' || f.kind === 'channel').length;
    const encodesWrong = encodes.filter((e) => e.status !== 'complete' || e.completionsLogged !== 1 || e.notified !== 1).length;
    const recordsLost = recordsMissing + encodesWrong + pending + missing + doubled;
    const total = l.count(undefined, () => true);
    const figures: FaultFigures = {
      fault: 'Redis restarted, then PostgreSQL restarted, under the whole load',
      recoverSeconds: Math.max(redisRecover, pgRecover),
      requestsFailed: l.failures.length,
      requestsTotal: total,
      recordsLost,
      details: {
        viewers: options.viewers,
        outageSeconds: outageMs / 1000,
        redisRecoverSeconds: Number(redisRecover.toFixed(1)),
        postgresRecoverSeconds: Number(pgRecover.toFixed(1)),
        viewerRequestsFailed: viewerFailures,
        // tried again as hls.js does and answered (a 503 of an ad segment on a process that never saw the session)
        segmentsRetried: l.retried.length,
        playlistsAnswered: l.count('playlist', () => true),
        apiUnavailableDuringPostgres: l.failures.filter((f) => f.kind === 'api' && f.status === 503 && during(pgDown, pgUp + pgRecover * 1000 + 1)(f)).length,
        fill: availSeconds > 0 ? Number((filledSeconds / availSeconds).toFixed(3)) : 'none',
        notificationsDue: due.length,
        encodesAcross: encodes.length,
        encodesWrong,
        recordsMissing,
        processesExited: cluster.all.filter((p) => !alive(p)).length,
      },
    };
    return {
      figures,
      exited: cluster.all.filter((p) => !alive(p)).map((p) => `${p.name} exited:\n${p.logs.slice(-15).join('\n')}`),
      unhandled: logs.filter((line) => line.includes('was not handled where it happened')),
      failures,
      retried: byKind(l.retried),
      // each retried answer with its time against the outages, for a failure's message
      retriedAt: l.retried.map((f) => `${f.code} ${f.status} at Redis down +${((f.at - redisDown) / 1000).toFixed(1)} s (up at +${((redisUp - redisDown) / 1000).toFixed(1)} s, back at +${((redisUp - redisDown) / 1000 + redisRecover).toFixed(1)} s), PostgreSQL down +${((f.at - pgDown) / 1000).toFixed(1)} s`),
      channel: { status: channelStatus, segmentAtRestart, segmentAtEnd: l.channelLastSegment, regressions: l.channelRegressions },
      encodes,
      notifications: { due: due.length, pending, missing, doubled },
      recordsMissing,
      fill: availSeconds > 0 ? filledSeconds / availSeconds : null,
    };
  } finally {
    probing = false;
    await probe.catch(() => undefined);
    await load?.close();
    await cluster.close();
  }
}

/** The full report (the test asserts on it). */
export const storeRestartsReport = storeRestartsRun;

/** The scenario as the bench registry takes it: 10 s outages. */
export const storeRestarts: FaultScenario = async (options) => (await storeRestartsRun({ outageSeconds: 10, ...options })).figures;
