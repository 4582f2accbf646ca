// A debug session (issue 31 item 8): the `ads.debug` flag of a playback URL read, and GET /v1/debug/{guid}/{session}
// answered to the organization that owns the configuration. Credentials are checked as the control API checks them
// (an ID token in Authorization or an API key in X-Api-Key), through the `authenticate` the wiring gives.
import type { IncomingHttpHeaders } from 'node:http';
import type { AdinsertConfig } from '../../kernel/seams/adinserts.js';
import { ssaiError, type SsaiError } from '../errors.js';
import type { DebugEntry, DebugLog } from '../store/debug-log.js';
import { fail, json, type Reply } from './http-reply.js';
import type { OriginResult } from './origin-fetcher.js';

/** Who called, as the control API resolves an ID token or API key. */
export type DebugCaller = { organizationId: string; permissions: readonly string[] };
/** A refusal of the credentials, in the control API's words (UNAUTHENTICATED, INVALID_TOKEN, …: 401). */
export type DebugAuthFailure = { status: number; code: string; description: string };
export type Authenticate = (headers: IncomingHttpHeaders) => Promise<DebugCaller | DebugAuthFailure>;

/** `ads.debug` (or the session body's `debug`): 1/true turn the log on, 0/false or absent leave it off. */
export function debugFlag(value: string | undefined): boolean | SsaiError {
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  return ssaiError('BAD_DEBUG_FLAG', `ads.debug (or the session body's debug) must be 1, true, 0 or false, not ${JSON.stringify(value.slice(0, 40))}`);
}

/**
 * An origin playlist as a debug session's request got it: the proxy shares fetches between sessions and reloads, so
 * `ms` is this request's wait (0 for a copy in hand), not always a round trip to the origin.
 */
export function originEntry(url: string, got: OriginResult, ms: number): Omit<Extract<DebugEntry, { kind: 'origin' }>, 'at'> {
  const took = Math.round(ms * 10) / 10;
  return got.ok ? { kind: 'origin', url, status: 200, ms: took, bytes: Buffer.byteLength(got.text) }
    : { kind: 'origin', url, status: got.error.status, ms: took, code: got.error.code, error: `${got.reason}: ${got.error.message}` };
}

export interface DebugRouteDeps {
  /** absent: no caller can be checked, every request is refused */
  authenticate: Authenticate | undefined;
  /** absent: no session has a log */
  log: DebugLog | undefined;
  config: (guid: string) => Promise<AdinsertConfig | SsaiError>;
}

/**
 * GET /v1/debug/{guid}/{session}: the session's log, to a caller of the configuration's organization. Another
 * organization's configuration, an unknown one and a session without a log all answer the same 404.
 */
export async function debugLogReply(deps: DebugRouteDeps, headers: IncomingHttpHeaders, guid: string, sid: string): Promise<Reply> {
  const caller = deps.authenticate ? await deps.authenticate(headers) : { status: 401, code: 'UNAUTHENTICATED', description: 'this proxy checks no credentials: its debug logs cannot be read' };
  if ('code' in caller) return json(caller.status, { status: false, code: caller.code, description: caller.description });
  if (!caller.permissions.includes('read')) return json(403, { status: false, code: 'FORBIDDEN', description: 'reading a debug log needs the read permission' });
  const notFound = fail(ssaiError('DEBUG_LOG_NOT_FOUND'));
  if (!guid || !sid || !deps.log) return notFound;
  const config = await deps.config(guid);
  if ('kind' in config) return config.code === 'DATABASE_UNAVAILABLE' ? fail(config) : notFound;
  if (config.organizationId !== caller.organizationId) return notFound;
  const entries = await deps.log.read(guid, sid);
  if (!entries) return notFound;
  const reply = json(200, { status: true, guid, session: sid, entries });
  reply.headers = { 'cache-control': 'no-store' };
  return reply;
}
