import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';

/** Issue 20: secrets (keys, passwords, tokens) never reach the logs; a whole run at trace level is grepped for them. */
describe('secrets in the logs of a run', () => {
  const secret = (label: string) => `${label}-${randomBytes(9).toString('base64url')}`;
  const adminPassword = secret('AdminPw');
  const secretKey = randomBytes(32).toString('base64');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engine-secrets-'));
  let engine: EngineProcess;
  const secrets: Record<string, string> = { adminPassword, secretKey };

  beforeAll(async () => {
    engine = await startEngineProcess('secrets', {
      DATA_DIR: dataDir, LOG_LEVEL: 'trace', ENGINE_ADMIN_EMAIL: 'admin@example.test', ENGINE_ADMIN_PASSWORD: adminPassword, ENGINE_SECRET_KEY: secretKey,
    });
  });
  afterAll(async () => {
    await engine?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const response = await fetch(`${engine.url}${url}`, {
      method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  it('writes none of the keys, passwords and tokens it handled', async () => {
    secrets.wrongPassword = secret('WrongPw');
    expect((await call('POST', '/auth/authorize', { email: 'admin@example.test', password: secrets.wrongPassword })).status).toBe(401);
    const tokens = (await call('POST', '/auth/authorize', { email: 'admin@example.test', password: adminPassword })).body.data;
    Object.assign(secrets, { idToken: tokens.IdToken, accessToken: tokens.AccessToken, refreshToken: tokens.RefreshToken });
    const refreshed = (await call('POST', '/auth/refresh', { refreshToken: tokens.RefreshToken })).body.data;
    Object.assign(secrets, { refreshedIdToken: refreshed.IdToken, refreshedRefreshToken: refreshed.RefreshToken });
    // A reused refresh token is refused (and its family revoked): the refusal must not log it either.
    expect((await call('POST', '/auth/refresh', { refreshToken: tokens.RefreshToken })).status).toBe(401);
    const auth = { Authorization: refreshed.IdToken };

    const broker = (await call('POST', '/broker/api-keys', { name: 'k', active: true }, auth)).body;
    secrets.brokerKey = (await call('GET', `/broker/api-keys/${broker.guid}`, undefined, auth)).body.data.value;
    secrets.liveKey = (await call('POST', '/api-keys', { name: 'live' }, auth)).body.value;
    expect((await call('GET', '/broker/private/adinserts', undefined, { 'X-Api-Key': String(secrets.brokerKey) })).status).toBe(200);
    expect((await call('GET', '/inputs', undefined, { 'X-Api-Key': String(secrets.liveKey) })).status).toBe(200);
    secrets.unknownKey = `mpe_${randomBytes(16).toString('hex')}`;
    expect((await call('GET', '/broker/private/adinserts', undefined, { 'X-Api-Key': String(secrets.unknownKey) })).status).toBe(401);

    const organization = JSON.parse(Buffer.from(refreshed.IdToken.split('.')[1], 'base64url').toString()).organization as string;
    secrets.userPassword = secret('UserPw');
    const user = await call('POST', `/organizations/${organization}/users`, { email: 'ann@example.test', name: 'Ann', password: secrets.userPassword, role: 'viewer' }, auth);
    expect(user.status).toBeLessThan(300);
    secrets.sourcePassword = secret('SourcePw');
    const input = await call('POST', '/inputs', { name: 'Pull', type: 'VIRTUAL_INPUT', protocol: 'URL_PULL', url: 'https://origin.example.test/a.m3u8', username: 'ann', password: secrets.sourcePassword }, auth);
    expect(input.status).toBe(200);
    // Tokens where they do not belong: in a query string and on a route that does not exist.
    await call('GET', `/workflows?token=${encodeURIComponent(refreshed.IdToken)}`, undefined, auth);
    await call('GET', '/no/such/route', undefined, { Authorization: `Bearer ${tokens.AccessToken}` });

    await engine.stop();
    const logs = engine.logs.join('\n');
    expect(logs).toContain('"request"');
    expect(logs.split('\n').length).toBeGreaterThan(15);
    const leaked = Object.entries(secrets).filter(([, value]) => {
      // A JWT is found by any of its parts but the header (which is the same for every token).
      const needles = value.split('.').length === 3 ? value.split('.').slice(1).filter((part) => part.length > 16) : [value];
      return needles.some((needle) => logs.includes(needle));
    });
    expect(leaked.map(([name]) => name)).toEqual([]);
  });
});
