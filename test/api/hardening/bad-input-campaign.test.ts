import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { badRequestsFor, type BadRequest } from '../../helpers/bad-requests.js';
import { catalogBlueprint } from '../live/live-helpers.js';

/**
 * Issue 20: at least 500 generated malformed requests across every endpoint of /openapi.json, on SQLite and on
 * PostgreSQL. None answers 5xx, the engine never logs an unexpected error, and a refused request changes nothing stored.
 */
for (const dialect of DIALECTS) {
  describe(`bad-input campaign on ${dialect}`, async () => {
    const skip = dialect === 'postgres' && !(await postgresAvailable());
    let engine: TestEngine;
    const errors: string[] = [];
    const ids: Record<string, string> = {};
    let idToken = '';
    let apiKey = '';
    let tableNames: string[] | undefined;

    beforeAll(async () => {
      if (skip) return;
      // Errors and fatals of the engine's own logger: an unexpected error is a crash in waiting even when answered 4xx.
      const sink = new Writable({ write(chunk, _enc, done) { errors.push(String(chunk)); done(); } });
      engine = await startTestEngine({ dialect, logger: pino({ level: 'error' }, sink) });
      idToken = (await engine.login()).IdToken;
      const auth = { Authorization: idToken };
      const post = async (url: string, body: unknown) => (await engine.api('POST', url, { headers: auth, body })).body;
      const org = engine.defaultOrganizationId;
      ids.org = org;
      const authKey = await post('/broker/api-keys', { name: 'campaign', active: true });
      apiKey = (await engine.api('GET', `/broker/api-keys/${authKey.guid}`, { headers: auth })).body.data.value;
      ids.brokerKey = (await post('/broker/api-keys', { name: 'target', active: true })).guid;
      ids.liveKey = (await post('/api-keys', { name: 'target' })).id;
      const attachment = (await engine.api('GET', `/organizations/${org}/meta-group-attachments`, { headers: auth })).body.data[0].guid;
      ids.metaGroup = (await post(`/organizations/${org}/meta-groups`, { attachment, name: 'G', fields: [{ name: 'a', type: 'string' }] })).guid;
      ids.image = (await post('/images/meta', { meta: { a: 'b' } })).guid ?? 'none';
      ids.input = (await post('/inputs', { name: 'In', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH' })).id;
      ids.workflow = (await post('/workflows', { name: 'W', blueprint: catalogBlueprint('rtmp-push-abr') })).id;
      ids.vod = (await post('/broker/vod/meta', { title: 'V' })).data.guid;
      ids.adinsert = (await post('/broker/adinserts', { name: 'A', ad_server: 'https://ads.example.test/vast', type: 'broker', source_url: 'https://origin.example.test' })).guid;
    });
    afterAll(async () => engine?.close());

    /** The real id a path parameter takes, so body checks behind the lookup run too. */
    function realId(path: string, name: string): string {
      if (name === 'metaGroupGuid') return ids.metaGroup!;
      if (path.startsWith('/organizations/')) return ids.org!;
      if (path.startsWith('/broker/api-keys')) return ids.brokerKey!;
      if (path.startsWith('/api-keys')) return ids.liveKey!;
      if (path.startsWith('/images/')) return ids.image!;
      if (path.startsWith('/inputs')) return ids.input!;
      if (path.startsWith('/devices')) return 'device-1';
      if (path.startsWith('/blueprints')) return 'rtmp-push-abr';
      if (path.startsWith('/workflows') || path.startsWith('/channels')) return ids.workflow!;
      if (path.includes('/adinserts')) return ids.adinsert!;
      if (name === 'type') return 'master';
      if (path.includes('/vod/')) return ids.vod!;
      return 'unknown';
    }

    /**
     * Every row of every table of this engine's schema, in a stable order. scheduler_locks and packager_processes are
     * left out: the scheduler renews its lease and the packager its heartbeat there on their own clocks, whatever the
     * requests do.
     */
    async function dump(): Promise<string> {
      const db = engine.ctx.store.db;
      // Only this engine's schema: introspecting every schema races the other tests dropping theirs.
      tableNames ??= (dialect === 'postgres'
        ? (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db)).rows.map((r) => r.name)
        : (await db.introspection.getTables()).map((t) => t.name)
      ).filter((name) => name !== 'scheduler_locks' && name !== 'packager_processes').sort();
      const names = tableNames;
      if (dialect === 'postgres') {
        // One round trip for the whole dump: 30 queries per request would make the campaign crawl.
        const columns = names.map((name) => sql`(select coalesce(json_agg(r.j order by r.j), '[]'::json) from (select row_to_json(t)::text as j from ${sql.table(name)} t) r) as ${sql.ref(name)}`);
        const row = (await sql<Record<string, unknown>>`select ${sql.join(columns)}`.execute(db)).rows[0] ?? {};
        return names.map((name) => `${name}:${(row[name] as string[]).join('\n')}`).join('\n\n');
      }
      const parts: string[] = [];
      for (const table of names) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
        parts.push(`${table}:${rows.rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).sort().join('\n')}`);
      }
      return parts.join('\n\n');
    }

    function changedLines(before: string, after: string): string {
      const old = new Set(before.split('\n'));
      return after.split('\n').filter((line) => !old.has(line)).join(' | ').slice(0, 600);
    }

    function headersFor(path: string): Record<string, string> {
      if (path.startsWith('/auth/')) return {};
      if (path.startsWith('/broker/private/') || path.startsWith('/images/private/')) return { 'X-Api-Key': apiKey };
      return { Authorization: idToken };
    }

    async function send(request: BadRequest): Promise<number> {
      const headers: Record<string, string> = { ...headersFor(request.url), accept: 'application/json' };
      if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
      const response = await fetch(`${engine.url}${request.url}`, { method: request.method, headers, ...(request.body !== undefined ? { body: request.body } : {}) });
      await response.arrayBuffer();
      return response.status;
    }

    it.skipIf(skip)('answers every malformed request below 500 and changes nothing stored on a refusal', async () => {
      const doc = (await engine.api('GET', '/openapi.json')).body as { paths: Record<string, Record<string, object>> };
      const requests: BadRequest[] = [];
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(operations)) requests.push(...badRequestsFor(method, path, operation, realId));
      }
      // Raw mounts the document does not list: media files and the proxy, with traversal in file names.
      for (const url of ['/media/..%2f..%2f..%2fetc%2fpasswd', '/media/%2e%2e/%2e%2e/etc/passwd', '/media/a%00b.m3u8', '/v1/master/..%2f..%2fetc/passwd',
        `/v1/master/${ids.adinsert}/..%2f..%2f..%2fetc%2fpasswd`, `/v1/master/${ids.adinsert}/a%00.m3u8`, `/broker/private/vod/upload/${ids.vod}?fileName=..%2f..%2f..%2ftmp%2fx.mp4`]) {
        requests.push({ label: `GET ${url}`, method: 'GET', url });
      }
      expect(requests.length).toBeGreaterThanOrEqual(500);

      const failures: string[] = [];
      let before = await dump();
      let refused = 0;
      for (const request of requests) {
        const status = await send(request);
        const after = await dump();
        if (status >= 500) failures.push(`${status} for ${request.label}`);
        else if (status >= 400) {
          refused++;
          if (after !== before) failures.push(`stored data changed on a refused request (${status}): ${request.label}: ${changedLines(before, after)}`);
        }
        before = after;
      }
      expect(failures).toEqual([]);
      expect(errors).toEqual([]);
      expect(refused).toBeGreaterThan(requests.length * 0.8);
      expect((await fetch(`${engine.url}/healthz`)).status).toBe(200);
      process.stderr.write(`bad-input campaign on ${dialect}: ${requests.length} requests, ${refused} refused, none 5xx\n`);
    }, 240_000);
  });
}
