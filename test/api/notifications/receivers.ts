// Real local receivers for notification tests: a webhook server on node:http and an SMTP server (smtp-server).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, any>;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Records every POST; answers `status` (200 unless changed). stop() closes the port for real (receiver down). */
export class WebhookReceiver {
  readonly received: ReceivedRequest[] = [];
  status = 200;
  /** answer this much later (a slow receiver) */
  delayMs = 0;
  private server: http.Server | undefined;
  port = 0;

  async start(port = this.port): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, any> = {};
        try {
          json = JSON.parse(body) as Record<string, any>;
        } catch {
          /* kept as text */
        }
        const answer = () => {
          if (this.status >= 200 && this.status < 300) this.received.push({ headers: req.headers, body, json });
          res.writeHead(this.status).end();
        };
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  notifications(event?: string): ReceivedRequest[] {
    return this.received.filter((r) => r.json.Type === 'Notification' && (!event || r.json.Event === event));
  }

  waitFor(what: string, predicate: (r: ReceivedRequest) => boolean, timeoutMs = 5000): Promise<ReceivedRequest> {
    return until(what, () => this.received.find(predicate), timeoutMs);
  }

  waitForCount(what: string, predicate: (r: ReceivedRequest) => boolean, count: number, timeoutMs = 5000): Promise<ReceivedRequest[]> {
    return until(what, () => {
      const found = this.received.filter(predicate);
      return found.length >= count ? found : undefined;
    }, timeoutMs);
  }
}

export interface ReceivedMail {
  to: string[];
  raw: string;
  headers: Record<string, string>;
  text: string;
}

/** A plain SMTP server (no TLS, no auth) that decodes the single text part nodemailer sends. */
export class SmtpReceiver {
  readonly mails: ReceivedMail[] = [];
  private server: SMTPServer | undefined;
  port = 0;

  async start(): Promise<this> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          this.mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, ...parseMail(raw) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  waitFor(what: string, predicate: (m: ReceivedMail) => boolean, timeoutMs = 5000): Promise<ReceivedMail> {
    return until(what, () => this.mails.find(predicate), timeoutMs);
  }
}

function parseMail(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.slice(split + 4);
  const text = /base64/i.test(headers['content-transfer-encoding'] ?? '') ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') : body;
  return { headers, text };
}
