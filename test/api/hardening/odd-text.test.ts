import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { badTextReason, findBadText } from '../../../src/http/validation.js';

describe('the text rule of the validation layer', () => {
  it('refuses NUL and unpaired surrogates and keeps every other string', () => {
    expect(badTextReason('a\u0000b')).toMatch(/NUL/);
    expect(badTextReason('\ud800')).toMatch(/surrogate/);
    expect(badTextReason('x\udc00')).toMatch(/surrogate/);
    expect(badTextReason('\ud83d\ude00 caf\u00e9 \u4e2d')).toBeUndefined();
    expect(findBadText({ a: ['ok', { b: 'x\u0000' }], 'k\u0000': 1 }).map((p) => p.field)).toEqual(['a.1.b', 'k\\u0000']);
  });
});

for (const dialect of DIALECTS) {
  describe(`odd text on ${dialect}`, async () => {
    const skip = dialect === 'postgres' && !(await postgresAvailable());
    let engine: TestEngine;
    let auth: Record<string, string>;
    beforeAll(async () => {
      if (skip) return;
      engine = await startTestEngine({ dialect });
      auth = { Authorization: (await engine.login()).IdToken };
    });
    afterAll(async () => engine?.close());

    const count = async (table: 'api_keys' | 'image_metas' | 'users') =>
      Number((await engine.ctx.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    const cases: Array<[string, () => Promise<{ status: number; body: any }>, string]> = [
      ['a NUL in the login email', () => engine.api('POST', '/auth/authorize', { body: { email: '\u0000', password: 'x' } }), 'email'],
      ['a NUL inside an API key name', () => engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: 'a\u0000b', active: true } }), 'name'],
      ['a lone high surrogate in an API key name', () => engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: 'a\ud800b', active: true } }), 'name'],
      ['a lone low surrogate in a nested value', () => engine.api('POST', '/images/meta', { headers: auth, body: { meta: { caption: '\udc00' } } }), 'meta.caption'],
      ['a NUL in an object key', () => engine.api('POST', '/images/meta', { headers: auth, body: { meta: { 'a\u0000': 'b' } } }), 'meta.a\\u0000'],
      ['a NUL in a query parameter', () => engine.api('GET', '/workflows?tags=a%00b', { headers: auth }), 'tags'],
      ['a NUL in a path id', () => engine.api('GET', '/broker/api-keys/a%00b', { headers: auth }), 'guid'],
    ];

    it.skipIf(skip).each(cases)('refuses %s with 400 VALIDATION_FAILED naming the field, storing nothing', async (_label, request, field) => {
      const before = await Promise.all([count('api_keys'), count('image_metas'), count('users')]);
      const answer = await request();
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
      expect(answer.body.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(answer.body.description).toContain(field);
      expect(await Promise.all([count('api_keys'), count('image_metas'), count('users')])).toEqual(before);
    });

    it.skipIf(skip)('refuses a tus upload whose file name carries a NUL, creating nothing', async () => {
      const meta = await engine.api('POST', '/broker/vod/meta', { headers: auth, body: { title: 'Clip', type: 'source' } });
      const guid: string = meta.body.guid ?? meta.body.data?.guid;
      expect(guid).toBeTruthy();
      const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
      const answer = await fetch(`${engine.url}/broker/upload`, {
        method: 'POST',
        headers: { ...auth, 'Tus-Resumable': '1.0.0', 'Upload-Length': '10', 'Upload-Metadata': `filename ${b64('a\u0000b.mp4')},x-engine-meta-metaguid ${b64(guid)}` },
      });
      expect(answer.status).toBe(400);
      const body = await answer.json();
      expect(body).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(body.description).toContain('Upload-Metadata.filename');
      expect(answer.headers.get('location')).toBeNull();
    });

    it.skipIf(skip)('stores well-formed text outside the BMP unaltered', async () => {
      const name = 'caf\u00e9 \ud83c\udfac \u4e2d\u6587';
      const created = await engine.api('POST', '/broker/api-keys', { headers: auth, body: { name, active: true } });
      expect(created.status).toBe(201);
      const guid = String(created.body.url).split('/').pop();
      const read = await engine.api('GET', `/broker/api-keys/${guid}`, { headers: auth });
      expect(read.body.data.name).toBe(name);
    });
  });
}
