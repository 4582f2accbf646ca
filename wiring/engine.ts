import http from 'node:http';
import { Counter } from 'prom-client';
import type { AddressInfo } from 'node:net';
import { loadConfig, withPublicUrl, type EngineConfig } from '../kernel/core/config.js';
import { systemClock, type Clock } from '../kernel/core/clock.js';
import { createLogger, type Logger } from '../kernel/core/logger.js';
import { createMetrics } from '../kernel/core/metrics.js';
import { openStore } from '../kernel/store/database.js';
import { KeyVault } from '../src/api-keys/key-vault.js';
import { ApiKeyStore } from '../src/api-keys/api-key.store.js';
import { loadOrCreateSigningKey } from '../src/auth/signing-keys.js';
import { TokenService } from '../src/auth/token.service.js';
import { createLoginLimiter } from '../src/auth/rate-limiter.js';
import type { EngineContext } from '../kernel/context.js';
import { ensureDefaultOrganization } from '../src/organizations/bootstrap.js';
import { createApp } from '../src/http/app.js';
import { systemMount } from '../src/http/system.router.js';
import { startMetricsListener } from '../src/http/metrics-endpoint.js';
import type { RouteSpec } from '../kernel/http/route.js';
import type { EnginePart } from '../kernel/part.js';
import { fastGetFront } from '../kernel/http/fast-get.js';
import { ENGINE_PARTS } from './parts.js';

export interface EngineOptions {
  /** environment to parse instead of the process environment (tests) */
  env?: Record<string, string | undefined>;
  roles?: string;
  clock?: Clock;
  logger?: Logger;
  /** PostgreSQL schema (tests isolate themselves) */
  databaseSchema?: string;
  parts?: EnginePart[];
}

export interface RunningEngine {
  ctx: EngineContext;
  url: string;
  server: http.Server;
  defaultOrganizationId: string;
  /** the METRICS_PORT listener's base URL, when METRICS_PORT is set */
  metricsUrl: string | undefined;
  /** set on the first start when ENGINE_ADMIN_PASSWORD was not given */
  generatedAdminPassword: string | undefined;
  close(): Promise<void>;
}

/** Builds and starts every part of this process's roles on one port. */
export async function startEngine(options: EngineOptions = {}): Promise<RunningEngine> {
  let config: EngineConfig = loadConfig(options.env, options.roles);
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const closers: Array<() => Promise<void> | void> = [];
  const store = await openStore({
    databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
    onConnectionError: (error) => logger.warn({ err: error }, 'a database connection was lost; the next query opens another'),
  });
  closers.push(() => store.close());
  try {
    const vault = KeyVault.open(config.secretKey, config.dataDir);
    const signingKey = await loadOrCreateSigningKey(store.db, clock.nowMs());
    const ctx: EngineContext = {
      config,
      logger,
      clock,
      store,
      metrics: createMetrics(),
      vault,
      tokens: new TokenService(store.db, signingKey, clock),
      apiKeys: new ApiKeyStore(store.db, vault),
      loginLimiter: createLoginLimiter({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, clock, logger }),
      services: {},
      onClose: (closer) => closers.push(closer),
    };
    closers.push(() => ctx.loginLimiter.close());
    const { organizationId, generatedPassword } = await ensureDefaultOrganization(ctx);
    if (generatedPassword) {
      logger.warn({ email: config.adminEmail }, 'generated a password for the master account; it is shown once on stderr');
      process.stderr.write(`\nMaster account: ${config.adminEmail}\nPassword (shown once): ${generatedPassword}\n\n`);
    }

    const parts = (options.parts ?? ENGINE_PARTS).filter((part) => part.roles.some((role) => config.roles.includes(role)));
    for (const part of parts) await part.init?.(ctx);

    const routes: RouteSpec[] = [];
    const server = http.createServer();
    // Players reload their media playlists every target duration (2-10 s) on one kept-alive connection: node's 5 s
    // default closed many between reloads, so each reload opened a new connection, and a burst of those overflowed
    // the listen queue (a dropped SYN costs the player 1 s; bench/ssai-capacity at 10,000 viewers). Longer than the
    // 60 s idle timeout of common load balancers in front, so they, not we, close an idle connection.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    // The port is known only after listen when PORT=0; URLs handed out need it, so routes are built after.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // A listen queue as long as the kernel allows (net.core.somaxconn; node's default is 511): connection bursts wait
      // for the event loop instead of being dropped.
      server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, () => resolve());
    });
    closers.push(() => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }));
    const port = (server.address() as AddressInfo).port;
    if (config.port === 0 && !config.publicUrlGiven) config = withPublicUrl(config, `http://127.0.0.1:${port}`);
    ctx.config = config;

    if (config.roles.includes('api')) routes.push(...parts.flatMap((part) => part.routes?.(ctx) ?? []));
    const mounts = [systemMount(ctx, () => routes), ...parts.flatMap((part) => part.mounts?.(ctx) ?? [])];
    const app = createApp(ctx, routes, mounts);
    const rawHandlers = parts.flatMap((part) => (part.rawHandler ? [part.rawHandler(ctx)] : []));
    server.on('request', (req, res) => {
      for (const handle of rawHandlers) if (handle(req, res)) return;
      app(req, res);
    });
    const fastGets = config.ssaiFastGet ? parts.flatMap((part) => { const f = part.fastGet?.(ctx); return f ? [f] : []; }) : [];
    if (fastGets.length) {
      const metrics = {
        answered: new Counter({ name: 'engine_fast_get_requests_total', help: 'plain GETs of the hot paths answered before node:http (kernel/http/fast-get.ts)', registers: [ctx.metrics.registry] }),
        handedOver: new Counter({ name: 'engine_fast_get_handovers_total', help: 'connections handed to node:http by the fast GET path (a request it does not take)', registers: [ctx.metrics.registry] }),
      };
      const closeFast = fastGetFront(server, fastGets, {
        keepAliveTimeoutMs: server.keepAliveTimeout, headersTimeoutMs: server.headersTimeout, metrics,
        onRefusedReply: (target, reply) => logger.error({ url: target, status: reply.status }, 'a reply could not be written: a header value holds a character HTTP refuses; answered 500'),
      });
      closers.push(closeFast);
    }
    let metricsUrl: string | undefined;
    if (config.metricsPort !== undefined) {
      const listener = await startMetricsListener(ctx, config.metricsPort);
      closers.push(() => listener.close());
      metricsUrl = listener.url;
    }
    for (const part of parts) await part.start?.(ctx);
    logger.info({ url: config.publicUrl, port, roles: config.roles, database: store.dialect, parts: parts.map((p) => p.name) }, 'engine started');

    let closing: Promise<void> | undefined;
    return {
      ctx,
      url: `http://127.0.0.1:${port}`,
      server,
      metricsUrl,
      defaultOrganizationId: organizationId,
      generatedAdminPassword: generatedPassword,
      close: () => (closing ??= runClosers(closers, logger)),
    };
  } catch (error) {
    await runClosers(closers, logger);
    throw error;
  }
}

const LISTEN_BACKLOG = 4096;

async function runClosers(closers: Array<() => Promise<void> | void>, logger: Logger): Promise<void> {
  for (const closer of closers.reverse()) {
    try {
      await closer();
    } catch (error) {
      logger.warn({ err: error }, 'a closer failed during shutdown');
    }
  }
}
