// Keep-alive GETs of the hot paths answered on the socket, before node:http (issue 28 point 2). At a break the SSAI
// proxy answers ~7,500 playlists and redirects a second on one thread; node:http's request and reply objects, streams
// and events cost 37-47 µs a request there against 23-36 µs for a bare responder (bench/http-floor.ts). This reads a
// request head itself only when it is the plainest case: HTTP/1.1, GET or HEAD, an origin-form path a part claims, no
// body, no folded or odd header line. Anything else (the first request of another kind, a body, an upgrade, a head
// too large, HTTP/1.0) hands the connection, with the bytes read so far, to node:http for the rest of its life, so
// every case it does not take stays node:http's, validation and limits included.
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A reply to a fast GET: a flat header list (name, value, …) without the length, and the body (text, or bytes already
 * encoded). The names are the part's own constants; the values may come from outside (a redirect's URI) and are checked.
 */
export type FastReply = { status: number; headers: readonly string[]; body: string | Buffer };
/** Who asked: the User-Agent header and the socket's peer address. */
export type FastClient = { userAgent: string | undefined; remoteAddress: string | undefined };
/**
 * A part's answer to a GET (head: a HEAD) of an origin-form target, or undefined when the target is not one it
 * answers here (the connection then goes to node:http).
 */
export type FastGet = (target: string, head: boolean, client: FastClient) => Promise<FastReply> | undefined;

/** node:http's default maxHeaderSize: a head larger goes to node:http, which answers 431. */
const MAX_HEAD_BYTES = 16 * 1024;
/** A header value node:http would refuse (CR, LF, NUL and other controls but tab, or past Latin-1). */
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** A header name as RFC 9110 defines a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

let dateSecond = 0;
let dateText = '';
/** The Date header's value, made once a second (node:http caches it the same way). */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

export interface FastGetOptions {
  /** idle time between requests on a kept-alive connection (the server's keepAliveTimeout) */
  keepAliveTimeoutMs: number;
  /** how long one request head may take to arrive (the server's headersTimeout) */
  headersTimeoutMs: number;
  /** counts requests answered here, and connections handed to node:http */
  metrics?: { answered: { inc(): void }; handedOver: { inc(): void } };
  /** told of a reply refused for a header value node:http would refuse (it is answered 500) */
  onRefusedReply?: (target: string, reply: FastReply) => void;
}

/**
 * Puts the fast path in front of an http.Server's connections: each new connection is read here until a request
 * comes that no FastGet answers; node:http's own connection listener then takes it over. Returns a function that
 * closes the connections still held here (server.close and closeAllConnections know only node:http's).
 */
export function fastGetFront(server: Server, handlers: readonly FastGet[], options: FastGetOptions): () => void {
  const httpListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const held = new Set<Socket>();
  const handOver = (socket: Socket, pending: Buffer | undefined, ended: boolean): void => {
    options.metrics?.handedOver.inc();
    held.delete(socket);
    socket.removeAllListeners('data');
    socket.removeAllListeners('timeout');
    socket.setTimeout(0);
    for (const listener of httpListeners) listener.call(server, socket);
    // The bytes read so far go to node:http's parser now, before anything the socket reads next. (Not unshift(): the
    // stream is already flowing, so nothing would emit them again, and node:http reads the socket natively from here.)
    if (pending?.length) socket.emit('data', pending);
    // (the client's end came before: node:http's listener was not there to see it)
    if (ended) socket.emit('end');
  };
  server.on('connection', (socket: Socket) => {
    held.add(socket);
    new FastConnection(socket, handlers, options, handOver, () => held.delete(socket)).start();
  });
  return () => {
    for (const socket of held) socket.destroy();
    held.clear();
  };
}

type FastRequest = { target: string; head: boolean; close: boolean; userAgent: string | undefined };

class FastConnection {
  private pending: Buffer | undefined;
  /** a reply is being made: later requests wait in `pending` (replies go out in order) */
  private busy = false;
  /** the client ended its side of the connection */
  private ended = false;
  private headStartedAt = 0;

  constructor(
    private readonly socket: Socket,
    private readonly handlers: readonly FastGet[],
    private readonly options: FastGetOptions,
    private readonly handOver: (socket: Socket, pending: Buffer | undefined, ended: boolean) => void,
    private readonly closed: () => void,
  ) {}

  start(): void {
    const { socket } = this;
    socket.setNoDelay(true);
    // The keep-alive timeout is the idle time between requests: a reply being made (a playlist waiting for its origin
    // or a decision) is not idle, as in node:http. It is off while a reply is made, and set again once it is written.
    socket.on('timeout', () => socket.destroy());
    socket.setTimeout(this.options.keepAliveTimeoutMs);
    socket.on('data', (chunk: Buffer) => {
      if (!this.pending?.length) this.headStartedAt = performance.now();
      this.pending = this.pending?.length ? Buffer.concat([this.pending, chunk]) : chunk;
      if (!this.busy) this.next();
    });
    // The client ended its side (http.Server sockets allow half-open): the reply being made still goes out, then the
    // connection ends, as node:http does; a request left incomplete is dropped with it.
    socket.on('end', () => {
      this.ended = true;
      if (!this.busy) socket.end();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', this.closed);
  }

  /** Answers the requests complete in `pending`, one at a time. */
  private next(): void {
    const { socket } = this;
    while (!this.busy && this.pending?.length && !socket.destroyed) {
      const pending = this.pending;
      const end = pending.indexOf('\r\n\r\n');
      if (end > MAX_HEAD_BYTES || (end < 0 && pending.length > MAX_HEAD_BYTES)) return this.handOver(socket, pending, this.ended);
      if (end < 0) {
        if (performance.now() - this.headStartedAt > this.options.headersTimeoutMs) socket.destroy();
        return;
      }
      const request = this.parse(pending.toString('latin1', 0, end));
      if (!request) return this.handOver(socket, pending, this.ended);
      let answering: Promise<FastReply> | undefined;
      const client = { userAgent: request.userAgent, remoteAddress: socket.remoteAddress };
      try {
        for (const handler of this.handlers) if ((answering = handler(request.target, request.head, client))) break;
      } catch {
        answering = Promise.resolve(INTERNAL); // (a handler that throws at once: a 500, never an uncaught exception)
      }
      if (!answering) return this.handOver(socket, pending, this.ended);
      this.pending = end + 4 < pending.length ? pending.subarray(end + 4) : undefined;
      if (this.pending) this.headStartedAt = performance.now();
      this.busy = true;
      socket.setTimeout(0);
      this.options.metrics?.answered.inc();
      answering.then((reply) => this.write(reply, request), () => this.write(INTERNAL, request)).finally(() => {
        this.busy = false;
        if (!socket.destroyed) socket.setTimeout(this.options.keepAliveTimeoutMs);
        if (!socket.destroyed && socket.writableNeedDrain) socket.once('drain', () => this.next());
        else this.next();
      });
    }
    if (this.ended && !this.busy && !socket.destroyed) socket.end();
  }

  /** The request line and headers when this path takes them (else undefined: node:http's). */
  private parse(head: string): FastRequest | undefined {
    const lineEnd = head.indexOf('\r\n');
    const line = lineEnd < 0 ? head : head.slice(0, lineEnd);
    const sp = line.indexOf(' ');
    const sp2 = line.indexOf(' ', sp + 1);
    if (sp < 0 || sp2 < 0 || line.slice(sp2 + 1) !== 'HTTP/1.1') return undefined;
    const method = line.slice(0, sp);
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    const target = line.slice(sp + 1, sp2);
    // origin-form, printable ASCII only (node:http refuses the rest with a 400)
    if (target[0] !== '/' || !/^[\x21-\x7e]+$/.test(target)) return undefined;
    let close = false;
    let host = false;
    let userAgent: string | undefined;
    for (let at = lineEnd; at >= 0;) {
      const from = at + 2;
      const to = head.indexOf('\r\n', from);
      const field = to < 0 ? head.slice(from) : head.slice(from, to);
      at = to;
      const colon = field.indexOf(':');
      if (colon <= 0) return undefined; // also a folded line (leading space) or a bare LF: node:http decides
      const name = field.slice(0, colon);
      if (!TOKEN.test(name) || field.includes('\n') || field.includes('\r')) return undefined;
      const value = field.slice(colon + 1).trim();
      switch (name.toLowerCase()) {
        case 'host':
          if (host) return undefined;
          host = true;
          break;
        case 'connection':
          if (/\bclose\b/i.test(value)) close = true;
          else if (!/^\s*keep-alive\s*$/i.test(value)) return undefined; // (an upgrade and the like)
          break;
        case 'user-agent':
          userAgent = value;
          break;
        case 'content-length':
          if (value !== '0') return undefined;
          break;
        case 'transfer-encoding': case 'expect': case 'upgrade':
          return undefined;
        default:
      }
    }
    // HTTP/1.1 requires a Host: node:http answers its absence with a 400
    if (!host) return undefined;
    return { target, head: method === 'HEAD', close, userAgent };
  }

  private write(reply: FastReply, request: FastRequest): void {
    const { socket } = this;
    if (socket.destroyed) return;
    let valid = true;
    for (let i = 1; i < reply.headers.length && valid; i += 2) valid = !BAD_VALUE.test(reply.headers[i]!);
    // A value node:http would refuse (a redirect to a URI with a control character): a 500, as the raw handler answers it.
    if (!valid) this.options.onRefusedReply?.(request.target, reply);
    const { status, headers, body } = valid ? reply : INTERNAL;
    let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
    for (let i = 0; i + 1 < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
    text += `Content-Length: ${Buffer.byteLength(body)}\r\nDate: ${httpDate()}\r\n`;
    text += request.close ? 'Connection: close\r\n\r\n' : `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(this.options.keepAliveTimeoutMs / 1000)}\r\n\r\n`;
    if (request.head || !body.length) socket.write(text, 'latin1');
    else {
      socket.cork();
      socket.write(text, 'latin1');
      socket.write(body, 'utf8'); // (the encoding applies to text only)
      socket.uncork();
    }
    if (request.close) {
      this.pending = undefined;
      socket.end();
    }
  }
}

const INTERNAL: FastReply = {
  status: 500, headers: ['content-type', 'application/json; charset=utf-8'],
  body: JSON.stringify({ status: false, code: 'INTERNAL', description: 'Internal error' }),
};
