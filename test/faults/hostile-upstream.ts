// A hostile upstream for the fault campaign (issue 32 item 6): one HTTP server that forwards each path prefix to a
// real backend (the fixture origin, the fixture ad server) and can, per path, answer late, dribble the body a byte
// at a time, hold the request unanswered, stream an endless body or a huge one. It stands in for its backends in what
// it forwards (their URLs in a body become its own, so an ad's beacons come here too). It counts the connections it
// has open, so a test sees from outside how many sockets the proxy keeps on it.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Hostility =
  | { kind: 'pass' }
  /** forwards the answer after ms */
  | { kind: 'delay'; ms: number }
  /** sends the backend's headers at once, then its body one byte every everyMs */
  | { kind: 'dribble'; everyMs: number }
  /** 200 with no length, then a byte every everyMs for ever (a slowloris body) */
  | { kind: 'trickle'; everyMs: number }
  /** reads the request and never answers (until release() or the client gives up) */
  | { kind: 'hold' }
  /** 200 with no length and a body that never ends, 64 KiB every few ms */
  | { kind: 'endless' }
  /** 200 with a body of this many bytes; `announce`: with its content-length */
  | { kind: 'huge'; bytes: number; announce: boolean };

const CHUNK = Buffer.alloc(64 * 1024, '#');

export class HostileUpstream {
  url = '';
  private readonly server: http.Server;
  private readonly backends = new Map<string, string>();
  private readonly behaviour = new Map<string, Hostility>();
  private readonly sockets = new Set<Socket>();
  /** answers waiting on a hold, or being dribbled, ended by release() */
  private readonly pending = new Set<() => void>();
  /** the most connections open at once since the last resetPeak() */
  peakConnections = 0;
  /** requests seen per path (without its query) */
  private readonly hits = new Map<string, number>();
  /** requests not yet answered or given up, per prefix, and the most at once since resetPeak() */
  private readonly inflight = new Map<string, number>();
  private readonly peakInflight = new Map<string, number>();

  private constructor() {
    this.server = http.createServer((req, res) => this.serve(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      this.peakConnections = Math.max(this.peakConnections, this.sockets.size);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** `backends`: path prefix (say `/origin`) → the base URL the rest of the path is forwarded to. */
  static async start(backends: Record<string, string>): Promise<HostileUpstream> {
    const h = new HostileUpstream();
    for (const [prefix, url] of Object.entries(backends)) h.backends.set(prefix, url);
    await new Promise<void>((r) => h.server.listen(0, '127.0.0.1', () => r()));
    h.url = `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
    return h;
  }

  /**
   * How requests under path (a backend's prefix or any path below it) are answered from now on; the longest matching
   * path wins. Requests already held stay held until release().
   */
  behave(path: string, how: Hostility): void {
    this.behaviour.set(path, how);
  }

  /** Every prefix back to plain forwarding, and every held or dribbling answer ended. */
  release(): void {
    this.behaviour.clear();
    for (const end of [...this.pending]) end();
    this.pending.clear();
  }

  /** Connections open on this server now (whoever opened them). */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Requests seen under this path (a prefix, or a whole path without its query). */
  requests(path: string): number {
    let n = 0;
    for (const [p, count] of this.hits) if (p === path || p.startsWith(`${path}/`)) n += count;
    return n;
  }

  /** Requests under prefix being answered now, and the most at once since resetPeak(). */
  pendingRequests(prefix: string): number {
    return this.inflight.get(prefix) ?? 0;
  }

  peakRequests(prefix: string): number {
    return this.peakInflight.get(prefix) ?? 0;
  }

  resetPeak(): void {
    this.peakConnections = this.sockets.size;
    this.peakInflight.clear();
    for (const [prefix, n] of this.inflight) this.peakInflight.set(prefix, n);
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = req.url ?? '/';
    const prefix = [...this.backends.keys()].find((p) => url.startsWith(`${p}/`));
    if (!prefix) { res.writeHead(404).end(); return; }
    const pathname = url.split('?')[0] ?? url;
    this.hits.set(pathname, (this.hits.get(pathname) ?? 0) + 1);
    const now = (this.inflight.get(prefix) ?? 0) + 1;
    this.inflight.set(prefix, now);
    this.peakInflight.set(prefix, Math.max(now, this.peakInflight.get(prefix) ?? 0));
    res.on('close', () => this.inflight.set(prefix, (this.inflight.get(prefix) ?? 1) - 1));
    const target = `${this.backends.get(prefix)}${url.slice(prefix.length)}`;
    const rule = [...this.behaviour.keys()].filter((p) => url === p || url.startsWith(p)).sort((a, b) => b.length - a.length)[0];
    const how: Hostility = (rule ? this.behaviour.get(rule) : undefined) ?? { kind: 'pass' };
    const self = `${this.url}${prefix}`;
    const backend = this.backends.get(prefix)!;
    // Whatever the behaviour, a client that goes away ends its answer here too (no timer left behind).
    const later = (end: () => void) => {
      const done = () => { this.pending.delete(done); end(); };
      this.pending.add(done);
      res.on('close', () => this.pending.delete(done));
    };
    switch (how.kind) {
      case 'pass': return void forward(target, res, backend, self);
      case 'delay': {
        const timer = setTimeout(() => { this.pending.delete(go); void forward(target, res, backend, self); }, how.ms);
        const go = () => { clearTimeout(timer); void forward(target, res, backend, self); };
        this.pending.add(go);
        res.on('close', () => { clearTimeout(timer); this.pending.delete(go); });
        return;
      }
      case 'hold': return later(() => void forward(target, res, backend, self));
      case 'dribble': return void dribble(target, res, how.everyMs, later, backend, self);
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
        const timer = setInterval(() => { if (!res.destroyed) res.write('.'); }, how.everyMs);
        res.on('close', () => clearInterval(timer));
        return later(() => { clearInterval(timer); res.end(); });
      }
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
        const pump = () => { while (!res.destroyed && res.write(CHUNK)); };
        res.on('drain', pump);
        pump();
        return later(() => res.end());
      }
      case 'huge': {
        res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl', ...(how.announce ? { 'content-length': how.bytes } : {}) });
        let left = how.bytes;
        const pump = () => {
          while (left > 0 && !res.destroyed) {
            const n = Math.min(left, CHUNK.length);
            left -= n;
            if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return;
          }
          if (left <= 0) res.end();
        };
        res.on('drain', pump);
        pump();
      }
    }
  }
}

/** The backend's answer at target (status, content type, body), its own URLs in a text body replaced by self. */
async function fetchBackend(target: string, backend: string, self: string): Promise<{ status: number; type: string; body: Buffer }> {
  const r = await fetch(target);
  const type = r.headers.get('content-type') ?? 'application/octet-stream';
  const bytes = Buffer.from(await r.arrayBuffer());
  const text = /xml|mpegurl|text|json/.test(type);
  return { status: r.status, type, body: text ? Buffer.from(bytes.toString('utf8').replaceAll(backend, self)) : bytes };
}

async function forward(target: string, res: http.ServerResponse, backend: string, self: string): Promise<void> {
  try {
    const got = await fetchBackend(target, backend, self);
    if (res.destroyed) return;
    res.writeHead(got.status, { 'content-type': got.type, 'content-length': got.body.length });
    res.end(got.body);
  } catch {
    if (!res.destroyed) res.writeHead(502).end();
  }
}

/** Headers at once, then the body a byte every everyMs; `later` registers the rest at once for release(). */
async function dribble(target: string, res: http.ServerResponse, everyMs: number, later: (end: () => void) => void, backend: string, self: string): Promise<void> {
  const got = await fetchBackend(target, backend, self).catch(() => undefined);
  if (!got || res.destroyed) { if (!res.destroyed) res.writeHead(502).end(); return; }
  res.writeHead(got.status, { 'content-type': got.type, 'content-length': got.body.length });
  res.flushHeaders();
  let at = 0;
  const timer = setInterval(() => {
    if (res.destroyed) { clearInterval(timer); return; }
    res.write(got.body.subarray(at, at + 1));
    at += 1;
    if (at >= got.body.length) { clearInterval(timer); res.end(); }
  }, everyMs);
  res.on('close', () => clearInterval(timer));
  later(() => { clearInterval(timer); if (!res.destroyed) res.end(got.body.subarray(at)); });
}
