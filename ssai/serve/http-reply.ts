// The SSAI proxy's answers as plain values (issue 5 "Playback"), and their writing on node:http with CORS.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RAW_SECURITY_HEADERS } from '../../kernel/http/raw-security-headers.js';
import { toErrorBody, type SsaiError } from '../errors.js';
import type { FastReply } from '../../kernel/http/fast-get.js';

const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS, HEAD',
  'access-control-allow-headers': '*',
  'access-control-expose-headers': '*',
};
const CORS_FLAT = [...Object.entries(CORS).flat(), ...RAW_SECURITY_HEADERS];
const M3U8 = 'application/vnd.apple.mpegurl';

/** `body`: text, or bytes already encoded (a DASH viewer's MPD, rendered from shared Buffer pieces). */
export type Reply = { status: number; body: string | Buffer; type: string; headers?: Record<string, string> };

export function json(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value), type: 'application/json; charset=utf-8' };
}
/** Seconds a player is told to wait after a 503 (a store away, issue 27). */
const RETRY_AFTER_SECONDS = '2';

export function fail(err: SsaiError): Reply {
  const reply = json(err.status, toErrorBody(err));
  if (err.status === 503) reply.headers = { 'retry-after': RETRY_AFTER_SECONDS };
  return reply;
}
export function playlist(text: string, live: boolean): Reply {
  return { status: 200, body: text, type: M3U8, headers: { 'cache-control': live ? 'no-cache' : 'public, max-age=60' } };
}

/** A reply's headers as a flat list (no per-request header object to build and walk), without its length. */
function headerList(reply: Reply): string[] {
  const headers: string[] = [...CORS_FLAT, 'content-type', reply.type];
  if (reply.headers) for (const k in reply.headers) headers.push(k, reply.headers[k]!);
  return headers;
}

export function writeReply(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  const headers = headerList(reply);
  if (reply.status !== 302) headers.push('content-length', String(Buffer.byteLength(reply.body)));
  res.writeHead(reply.status, headers);
  res.end(req.method === 'HEAD' ? undefined : reply.body);
}

/** The reply for the fast path (kernel/http/fast-get.ts), which writes the length itself. */
export function fastReply(reply: Reply): FastReply {
  return { status: reply.status, headers: headerList(reply), body: reply.body };
}

/** The body as text, or undefined when it is over `limit` (the rest is drained so a 413 can still be answered). */
export function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    // A client gone before the end: settle (after 'end' this rejection is a no-op).
    req.on('close', () => reject(new Error('the request closed before its body ended')));
  });
}

/** Who asked: the User-Agent and the peer's address ([session.user_agent], [session.client_ip]). */
export type Client = { userAgent?: string; clientIp?: string };

/** The longest User-Agent kept with a session (a header can be kilobytes; the session keeps it for hours). */
const MAX_USER_AGENT = 512;

/**
 * The client of a request. The address is the socket's peer: the engine trusts no proxy in front of it (nothing reads
 * X-Forwarded-For), so a header a player could forge is not taken for its address. An IPv4-mapped IPv6 address is
 * written as IPv4.
 */
export function clientOf(req: IncomingMessage): Client {
  return clientFrom(req.headers['user-agent'], req.socket.remoteAddress);
}

/** The client from its User-Agent header and the socket's peer address (the fast GET path has no IncomingMessage). */
export function clientFrom(userAgent: string | undefined, remoteAddress: string | undefined): Client {
  const out: Client = {};
  if (userAgent) out.userAgent = userAgent.slice(0, MAX_USER_AGENT);
  if (remoteAddress) out.clientIp = remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.') ? remoteAddress.slice(7) : remoteAddress;
  return out;
}
