// The only module that reads process.env (STYLE.md rule 6): parsed once at boot, frozen, passed down.
import path from 'node:path';
import { z } from 'zod';

export const ROLES = ['api', 'ssai', 'worker', 'packager'] as const;
export type Role = (typeof ROLES)[number];

/** Every configuration variable, with its default and meaning; `engine --help` prints this table. */
export const CONFIG_VARIABLES = [
  ['PORT', '8080', 'the one port of the all-in-one process'],
  ['HOST', '0.0.0.0', 'the address to listen on'],
  ['PUBLIC_URL', 'http://localhost:$PORT', 'base of every URL the engine hands out (masterEndpoint, media, archives)'],
  ['DATA_DIR', './data', 'SQLite file, media store, archives, logs of ffmpeg runs'],
  ['DATABASE_URL', 'SQLite in DATA_DIR', 'postgres://… for scale-out'],
  ['REDIS_URL', 'unset (in-memory)', 'redis://… for shared SSAI sessions and caches'],
  ['REDIS_PREFIX', 'empty', 'prefix of every Redis key, so several engines can share one Redis'],
  ['ENGINE_ADMIN_EMAIL', 'admin@localhost', "the default organization's master account"],
  ['ENGINE_ADMIN_PASSWORD', 'generated and printed once at first start', "the master account's password"],
  ['FFMPEG_PATH', 'ffmpeg on PATH', 'the ffmpeg binary'],
  ['FFPROBE_PATH', 'ffprobe on PATH', 'the ffprobe binary'],
  ['ENGINE_ROLES', 'api,ssai,worker,packager', 'roles this process runs (same as --roles)'],
  ['ENGINE_REGIONS', 'local', 'comma-separated region names; the first is the default region'],
  ['ENGINE_SECRET_KEY', 'generated into DATA_DIR/keys/master.key', 'base64 of 32 bytes that encrypts API keys at rest; give every instance the same'],
  ['RTMP_PORT', '1935', 'the TCP port of the RTMP_PUSH ingest server (0: any free port)'],
  ['METRICS_TOKEN', 'unset (/metrics answers anyone)', 'when set, /metrics asks for Authorization: Bearer <token> (at least 16 characters)'],
  ['METRICS_PORT', 'unset (/metrics on PORT)', 'a separate listener for /metrics on HOST (0: any free port); /metrics is then served only there'],
  ['LOG_LEVEL', 'info', 'pino log level (fatal, error, warn, info, debug, trace, silent)'],
  ['SMTP_URL', 'unset (email subscriptions refused)', 'smtp://user:pass@host:587 or smtps://… for email notifications'],
  ['SMTP_FROM', 'notifications@<PUBLIC_URL host>', 'sender address of notification emails'],
  ['NOTIFY_HTTP_LOOPBACK', 'false', 'true lets webhook endpoints be http:// on a loopback address (tests, local receivers)'],
  ['NOTIFY_POLL_MS', '1000', 'how often the notification outbox is polled for due messages'],
  ['LINEAR_WINDOW_SEGMENTS', '15', 'segments per media playlist of a virtual channel (same on every instance)'],
  ['SSAI_DECISION_THREADS', '1', 'worker threads making the SSAI ad decisions beside the playlists, plus one sending the beacons (0: both on the main thread)'],
  ['SSAI_DECISION_NICE', '10', 'how much nicer (OS priority, 0-19) the decision threads run than the process: they take the cores the playlists leave'],
  ['SSAI_BEACON_NICE', '15', 'how much nicer (OS priority, 0-19) the beacon thread runs than the process: behind the decisions, which have a deadline (a beacon may go out seconds late)'],
  ['SSAI_FAST_GET', 'true', 'true: plain keep-alive GETs of the playback routes answered on the socket before node:http (false: every request through node:http)'],
] as const;

const rolesSchema = z
  .string()
  .transform((value) => value.split(',').map((role) => role.trim()).filter(Boolean))
  .pipe(z.array(z.enum(ROLES)).min(1));

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL (leave unset for SQLite)')
    .optional(),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').optional(),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_.-]{0,64}$/, 'letters, digits, :, _, . and -, at most 64').default(''),
  // Local names such as admin@localhost are valid here, so no strict RFC domain check.
  ENGINE_ADMIN_EMAIL: z.string().regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address').default('admin@localhost'),
  ENGINE_ADMIN_PASSWORD: z.string().min(8, 'must have at least 8 characters').optional(),
  FFMPEG_PATH: z.string().min(1).default('ffmpeg'),
  FFPROBE_PATH: z.string().min(1).default('ffprobe'),
  ENGINE_ROLES: rolesSchema.default(['api', 'ssai', 'worker', 'packager']),
  ENGINE_REGIONS: z
    .string()
    .transform((value) => value.split(',').map((name) => name.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[a-z0-9-]{1,64}$/, 'region names are a-z, 0-9 and -')).min(1))
    .default(['local']),
  ENGINE_SECRET_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be base64 of exactly 32 bytes')
    .optional(),
  RTMP_PORT: z.coerce.number().int().min(0).max(65535).default(1935),
  METRICS_TOKEN: z.string().min(16, 'must have at least 16 characters').regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces').optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  SMTP_FROM: z.string().regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address').optional(),
  NOTIFY_HTTP_LOOPBACK: z.enum(['true', 'false']).default('false'),
  NOTIFY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  LINEAR_WINDOW_SEGMENTS: z.coerce.number().int().min(3).max(1000).default(15),
  SSAI_DECISION_THREADS: z.coerce.number().int().min(0).max(16).default(1),
  SSAI_DECISION_NICE: z.coerce.number().int().min(0).max(19).default(10),
  SSAI_BEACON_NICE: z.coerce.number().int().min(0).max(19).default(15),
  SSAI_FAST_GET: z.enum(['true', 'false']).default('true'),
});

export interface EngineConfig {
  readonly port: number;
  readonly host: string;
  readonly publicUrl: string;
  /** false when publicUrl is the default, so an engine on a random port may replace it with the port it got */
  readonly publicUrlGiven: boolean;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly redisPrefix: string;
  readonly adminEmail: string;
  readonly adminPassword: string | undefined;
  readonly ffmpegPath: string;
  readonly ffprobePath: string;
  readonly roles: readonly Role[];
  readonly regions: readonly string[];
  readonly defaultRegion: string;
  readonly secretKey: string | undefined;
  readonly logLevel: string;
  /** when set, /metrics needs it as a bearer token */
  readonly metricsToken: string | undefined;
  /** when set, /metrics is served on its own listener on this port (0: any free port) and not on the main one */
  readonly metricsPort: number | undefined;
  readonly smtpUrl: string | undefined;
  readonly smtpFrom: string;
  readonly notifyHttpLoopback: boolean;
  readonly notifyPollMs: number;
  readonly rtmpPort: number;
  readonly linearWindowSegments: number;
  readonly ssaiDecisionThreads: number;
  readonly ssaiDecisionNice: number;
  readonly ssaiBeaconNice: number;
  /** the SSAI hot paths' plain GETs answered before node:http (kernel/http/fast-get.ts) */
  readonly ssaiFastGet: boolean;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`configuration variable ${variable}: ${detail}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, roleOverride?: string | undefined): EngineConfig {
  const source = { ...env };
  if (roleOverride !== undefined) source.ENGINE_ROLES = roleOverride;
  // Empty strings mean "unset", as in most shells' `VAR= cmd` usage.
  for (const key of Object.keys(source)) if (source[key] === '') delete source[key];
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'unknown');
    throw new ConfigError(variable, issue?.message ?? 'invalid value');
  }
  const value = parsed.data;
  const publicUrl = (value.PUBLIC_URL ?? `http://localhost:${value.PORT}`).replace(/\/+$/, '');
  const [defaultRegion] = value.ENGINE_REGIONS;
  return Object.freeze({
    port: value.PORT,
    host: value.HOST,
    publicUrl,
    publicUrlGiven: value.PUBLIC_URL !== undefined,
    dataDir: path.resolve(value.DATA_DIR),
    databaseUrl: value.DATABASE_URL,
    redisUrl: value.REDIS_URL,
    redisPrefix: value.REDIS_PREFIX,
    adminEmail: value.ENGINE_ADMIN_EMAIL,
    adminPassword: value.ENGINE_ADMIN_PASSWORD,
    ffmpegPath: value.FFMPEG_PATH,
    ffprobePath: value.FFPROBE_PATH,
    roles: Object.freeze([...new Set(value.ENGINE_ROLES)]),
    regions: Object.freeze(value.ENGINE_REGIONS),
    defaultRegion: defaultRegion ?? 'local',
    secretKey: value.ENGINE_SECRET_KEY,
    logLevel: value.LOG_LEVEL,
    metricsToken: value.METRICS_TOKEN,
    metricsPort: value.METRICS_PORT,
    smtpUrl: value.SMTP_URL,
    smtpFrom: value.SMTP_FROM ?? `notifications@${new URL(publicUrl).hostname}`,
    notifyHttpLoopback: value.NOTIFY_HTTP_LOOPBACK === 'true',
    notifyPollMs: value.NOTIFY_POLL_MS,
    rtmpPort: value.RTMP_PORT,
    linearWindowSegments: value.LINEAR_WINDOW_SEGMENTS,
    ssaiDecisionThreads: value.SSAI_DECISION_THREADS,
    ssaiDecisionNice: value.SSAI_DECISION_NICE,
    ssaiBeaconNice: value.SSAI_BEACON_NICE,
    ssaiFastGet: value.SSAI_FAST_GET === 'true',
  });
}

/** A config with a changed public URL, for servers that learn their port only after listening on 0. */
export function withPublicUrl(config: EngineConfig, publicUrl: string): EngineConfig {
  return Object.freeze({ ...config, publicUrl: publicUrl.replace(/\/+$/, '') });
}
