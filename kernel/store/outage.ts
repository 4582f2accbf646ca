// Telling a database outage (PostgreSQL restarting, unreachable, out of connections) from a failure of the request
// itself (issue 27): an outage answers 503 DATABASE_UNAVAILABLE with Retry-After, never a 500.

/** SQLSTATEs of a server that is going away, coming up or refusing connections (PostgreSQL appendix A). */
const OUTAGE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53400']);
/** Socket errors of a server that is not there (or a network between that is not). */
const OUTAGE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** node-postgres and pg-pool say these in words only (no code). */
const OUTAGE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'not queryable',
  'Client was closed and is not queryable',
  'Connection terminated due to connection timeout',
];

/** Seconds a client is told to wait before trying again while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Whether `error` says the database is unreachable (rather than that the query was wrong). */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, message, errors, cause } = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && (OUTAGE_SQLSTATES.has(code) || code.startsWith('08') || OUTAGE_SOCKET_CODES.has(code))) return true;
  if (typeof message === 'string' && OUTAGE_MESSAGES.some((m) => message.includes(m))) return true;
  // node's happy-eyeballs connect fails with an AggregateError of one error per address tried
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}

/** ioredis's words for a Redis that is away (its errors carry no code). */
const REDIS_OUTAGE_MESSAGES = ['Connection is closed', "Stream isn't writeable", 'Command timed out', 'Reached the max retries per request limit'];

/**
 * Whether `error` says a store (PostgreSQL or Redis) is away: the last-resort check of the process's unhandled
 * rejections (wiring/cli.ts), where such an error is logged rather than allowed to end the process.
 */
export function isStoreOutage(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === 'SESSION_STORE_UNAVAILABLE') return true;
  return typeof message === 'string' && REDIS_OUTAGE_MESSAGES.some((m) => message.includes(m));
}
