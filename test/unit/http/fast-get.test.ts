// kernel/http/fast-get.ts on raw sockets: what it answers itself, and what it hands to node:http with every byte.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastGetFront, type FastGet, type FastReply } from '../../../kernel/http/fast-get.js';

let server: http.Server;
let port: number;
let closeFast: () => void;
/** what node:http saw: method, url, body */
const viaHttp: Array<{ method: string; url: string; body: string }> = [];
let slowRelease: (() => void) | undefined;
/** replies the fast path refused for a header value (onRefusedReply) */
const refused: string[] = [];

const fast: FastGet = (target, head) => {
  if (!target.startsWith('/fast/')) return undefined;
  if (target === '/fast/slow') return new Promise<FastReply>((resolve) => { slowRelease = () => resolve({ status: 200, headers: ['content-type', 'text/plain'], body: 'slow' }); });
  if (target === '/fast/bad-header') return Promise.resolve({ status: 302, headers: ['location', 'http://x/\r\nset-cookie: a=b'], body: '' });
  if (target === '/fast/throws') return Promise.reject(new Error('boom'));
  if (target === '/fast/throws-at-once') throw new Error('boom at once');
  if (target === '/fast/bytes') return Promise.resolve({ status: 200, headers: ['content-type', 'text/plain'], body: Buffer.from('bytes é ✓', 'utf8') });
  return Promise.resolve({ status: 200, headers: ['content-type', 'text/plain', 'x-head', String(head)], body: `fast ${target} é` });
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => {
      viaHttp.push({ method: req.method ?? '', url: req.url ?? '', body });
      const text = `http ${req.method} ${req.url} ${body}`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) }).end(text);
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
  closeFast = fastGetFront(server, [fast], { keepAliveTimeoutMs: 5000, headersTimeoutMs: 5000, onRefusedReply: (target) => refused.push(target) });
});
afterAll(async () => {
  closeFast();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A raw connection: writes bytes, reads replies (parsed by their Content-Length). */
class Raw {
  private readonly socket: net.Socket;
  private data = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;
  constructor(to = port) {
    this.socket = net.connect(to, '127.0.0.1');
    this.socket.on('data', (c: Buffer) => { this.data = Buffer.concat([this.data, c]); this.wake(); });
    this.socket.on('close', () => { this.closed = true; this.wake(); });
    this.socket.on('error', () => undefined);
  }
  private wake(): void { for (const w of this.waiters.splice(0)) w(); }
  send(text: string): void { this.socket.write(text); }
  /** The next reply: status, headers (lower-case names), body. */
  async reply(headOnly = false): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    for (;;) {
      const end = this.data.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = this.data.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) { const c = l.indexOf(':'); headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim(); }
        const length = headOnly ? 0 : Number(headers['content-length'] ?? 0);
        if (this.data.length >= end + 4 + length) {
          const body = this.data.subarray(end + 4, end + 4 + length).toString('utf8');
          this.data = this.data.subarray(end + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), headers, body };
        }
      }
      if (this.closed) throw new Error(`closed with ${this.data.length} bytes unread`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
  async untilClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  end(): void { this.socket.destroy(); }
  /** Ends this side only (a half-close): the server may still answer. */
  halfClose(): void { this.socket.end(); }
}

const get = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

describe('fast GET front', () => {
  it('answers its GETs on a kept-alive connection with length, date and keep-alive, in order when pipelined', async () => {
    const c = new Raw();
    c.send(get('/fast/a') + get('/fast/b?q=1'));
    const a = await c.reply();
    const b = await c.reply();
    expect(a).toMatchObject({ status: 200, body: 'fast /fast/a é' });
    expect(a.headers['content-length']).toBe(String(Buffer.byteLength('fast /fast/a é')));
    expect(a.headers.connection).toBe('keep-alive');
    expect(a.headers.date).toMatch(/GMT$/);
    expect(b.body).toBe('fast /fast/b?q=1 é');
    // a head split over several packets
    c.send('GET /fast/c HT');
    c.send('TP/1.1\r\nHo');
    c.send('st: x\r\n\r\n');
    expect((await c.reply()).body).toBe('fast /fast/c é');
    c.end();
    expect(viaHttp).toHaveLength(0);
  });

  it('answers a HEAD with the length and no body', async () => {
    const c = new Raw();
    c.send(`HEAD /fast/h HTTP/1.1\r\nHost: x\r\n\r\n${get('/fast/after')}`);
    const h = await c.reply(true);
    expect(h.headers['x-head']).toBe('true');
    expect(h.headers['content-length']).toBe(String(Buffer.byteLength('fast /fast/h é')));
    expect((await c.reply()).body).toBe('fast /fast/after é');
    c.end();
  });

  it('waits for a slow answer before the next pipelined one', async () => {
    const c = new Raw();
    c.send(get('/fast/slow') + get('/fast/next'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    slowRelease?.();
    expect((await c.reply()).body).toBe('slow');
    expect((await c.reply()).body).toBe('fast /fast/next é');
    c.end();
  });

  it('hands a connection to node:http with its unread bytes: a POST body, the requests after it, and later ones', async () => {
    viaHttp.length = 0;
    const c = new Raw();
    c.send(get('/fast/first') + 'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello');
    expect((await c.reply()).body).toBe('fast /fast/first é');
    c.send(' world');
    expect((await c.reply()).body).toBe('http POST /api/x hello world');
    // node:http keeps the connection: a GET the fast path would take now goes through node:http
    c.send(get('/fast/later'));
    expect((await c.reply()).body).toBe('http GET /fast/later ');
    expect(viaHttp.map((r) => r.url)).toEqual(['/api/x', '/fast/later']);
    c.end();
  });

  it('leaves to node:http what it does not take: HTTP/1.0, no Host, a body, an upgrade, a folded header, a huge head', async () => {
    const cases = [
      'GET /fast/x HTTP/1.0\r\nHost: x\r\n\r\n',
      'GET /fast/x HTTP/1.1\r\n\r\n',
      'GET /fast/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /fast/x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      'GET /fast/x HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n',
      `GET /fast/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ];
    for (const text of cases) {
      const c = new Raw();
      c.send(text);
      const r = await c.reply().catch(() => ({ status: 0, headers: {}, body: '' }));
      // node:http answers: its own reply (200 from the handler) or its refusal (400, 431), never the fast one
      expect(r.body.startsWith('fast'), text.slice(0, 60)).toBe(false);
      c.end();
    }
  });

  it('closes after the reply when asked, and answers a refused header value or a failure (later or at once) with a 500', async () => {
    const c = new Raw();
    c.send(get('/fast/bad-header') + get('/fast/throws') + get('/fast/throws-at-once') + get('/fast/bye', 'Connection: close\r\n'));
    expect((await c.reply()).status).toBe(500);
    expect((await c.reply()).status).toBe(500);
    expect((await c.reply()).status).toBe(500);
    // only the refused header value is reported as such (the failures are the handler's own)
    expect(refused).toEqual(['/fast/bad-header']);
    const bye = await c.reply();
    expect(bye.headers.connection).toBe('close');
    await c.untilClosed();
    expect(c.closed).toBe(true);
  });

  it('answers a client that ended its side, then ends the connection (a fast request and one node:http takes)', async () => {
    const fastOne = new Raw();
    fastOne.send(get('/fast/slow'));
    fastOne.halfClose();
    await new Promise((resolve) => setTimeout(resolve, 50));
    slowRelease?.();
    expect((await fastOne.reply()).body).toBe('slow');
    await fastOne.untilClosed();
    const handed = new Raw();
    handed.send('POST /api/ended HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok');
    handed.halfClose();
    expect((await handed.reply()).body).toBe('http POST /api/ended ok');
    await handed.untilClosed();
    expect(handed.closed).toBe(true);
  });

  it('keeps a connection whose reply takes longer than the keep-alive timeout, and closes it once idle that long', async () => {
    // its own server: a keep-alive timeout of 300 ms, a reply released after 3 of them
    let release: (() => void) | undefined;
    const slowServer = http.createServer((_req, res) => { res.end(); });
    await new Promise<void>((resolve) => slowServer.listen(0, '127.0.0.1', resolve));
    const close = fastGetFront(slowServer, [() => new Promise<FastReply>((resolve) => { release = () => resolve({ status: 200, headers: [], body: 'late' }); })], { keepAliveTimeoutMs: 300, headersTimeoutMs: 5000 });
    try {
      const c = new Raw((slowServer.address() as net.AddressInfo).port);
      c.send(get('/any'));
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(c.closed).toBe(false);
      release?.();
      expect((await c.reply()).body).toBe('late');
      await c.untilClosed(); // idle past the timeout now: closed by the server
    } finally {
      close();
      await new Promise((resolve) => slowServer.close(resolve));
    }
  });

  it('is reached by fetch and node:http clients alike', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/fast/fetch`);
    expect(await res.text()).toBe('fast /fast/fetch é');
    const body = await new Promise<string>((resolve, reject) => {
      http.get(`http://127.0.0.1:${port}/fast/node`, (r) => { let t = ''; r.setEncoding('utf8'); r.on('data', (d: string) => { t += d; }); r.on('end', () => resolve(t)); }).on('error', reject);
    });
    expect(body).toBe('fast /fast/node é');
    // a body given as bytes goes out as they are, its length counted in bytes
    const bytes = await fetch(`http://127.0.0.1:${port}/fast/bytes`);
    expect(bytes.headers.get('content-length')).toBe(String(Buffer.byteLength('bytes é ✓')));
    expect(await bytes.text()).toBe('bytes é ✓');
  });
});
