import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scryptSync } from 'node:crypto';
import { ManualClock } from '../../../kernel/core/clock.js';
import { passwordNeedsRehash } from '../../../src/auth/passwords.js';
import { findUserByEmail } from '../../../src/organizations/organization.store.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';

const postgres = await postgresAvailable();

describe.each(DIALECTS)('authentication service on %s', (dialect) => {
  const skip = dialect === 'postgres' && !postgres;
  let engine: TestEngine;
  const clock = new ManualClock('2026-03-02T10:00:00Z');

  beforeAll(async () => {
    if (skip) return;
    engine = await startTestEngine({ dialect, clock });
  });
  afterAll(async () => engine?.close());

  it.skipIf(skip)('issues the tokens of spec 4.1 for the master account', async () => {
    const answer = await engine.api('POST', '/auth/authorize', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe(true);
    expect(answer.body.data).toMatchObject({ ExpiresIn: 3600, TokenType: 'Bearer' });
    for (const field of ['AccessToken', 'RefreshToken', 'IdToken']) expect(typeof answer.body.data[field]).toBe('string');
    const claims = JSON.parse(Buffer.from(answer.body.data.IdToken.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ organization: engine.defaultOrganizationId, role: 'admin', email: ADMIN_EMAIL });
    expect(claims.permissions).toEqual(['read', 'write', 'admin']);
  });

  it.skipIf(skip)('refuses a wrong password with 401 and rate limits repeated failures with Retry-After', async () => {
    const email = 'nobody@example.test';
    for (let attempt = 0; attempt < 5; attempt++) {
      const answer = await engine.api('POST', '/auth/authorize', { body: { email, password: 'wrong-password' } });
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe('INVALID_CREDENTIALS');
    }
    const limited = await engine.api('POST', '/auth/authorize', { body: { email, password: 'wrong-password' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    clock.advance(16 * 60 * 1000);
    const later = await engine.api('POST', '/auth/authorize', { body: { email, password: 'wrong-password' } });
    expect(later.status).toBe(401);
  });

  it.skipIf(skip)('rotates the refresh token and refuses a reused one, revoking its family', async () => {
    const first = await engine.login();
    const second = await engine.api('POST', '/auth/refresh', { body: { refreshToken: first.RefreshToken } });
    expect(second.status).toBe(200);
    expect(second.body.data.RefreshToken).not.toBe(first.RefreshToken);
    const reuse = await engine.api('POST', '/auth/refresh', { body: { refreshToken: first.RefreshToken } });
    expect(reuse.status).toBe(401);
    expect(reuse.body.code).toBe('INVALID_TOKEN');
    // The reuse revoked the family: the token issued by the legitimate rotation stops working too.
    const after = await engine.api('POST', '/auth/refresh', { body: { refreshToken: second.body.data.RefreshToken } });
    expect(after.status).toBe(401);
  });

  it.skipIf(skip)('refuses an expired ID token', async () => {
    const tokens = await engine.login();
    const ok = await engine.api('GET', '/api-keys', { headers: { Authorization: tokens.IdToken } });
    expect(ok.status).toBe(200);
    clock.advance(3601 * 1000);
    const expired = await engine.api('GET', '/api-keys', { headers: { Authorization: tokens.IdToken } });
    expect(expired.status).toBe(401);
    expect(expired.body.description).toMatch(/expired/);
  });

  it.skipIf(skip)('lets a viewer read but not write, and lists the built-in roles', async () => {
    const admin = await engine.login();
    const auth = { Authorization: admin.IdToken };
    const roles = await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/roles`, { headers: auth });
    expect(roles.body.data.map((r: { name: string }) => r.name).sort()).toEqual(['admin', 'editor', 'viewer']);
    const created = await engine.api('POST', `/organizations/${engine.defaultOrganizationId}/users`, {
      headers: auth,
      body: { email: `viewer-${dialect}@example.test`, name: 'Vera', password: 'viewer-password', role: 'viewer' },
    });
    expect(created.status).toBe(201);
    const users = await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/users`, { headers: auth });
    expect(users.body.data.some((u: { email: string; role: string }) => u.email === `viewer-${dialect}@example.test` && u.role === 'viewer')).toBe(true);
    const viewer = await engine.login(`viewer-${dialect}@example.test`, 'viewer-password');
    const read = await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/meta-groups`, { headers: { Authorization: viewer.IdToken } });
    expect(read.status).toBe(200);
    const write = await engine.api('POST', '/images/meta', { headers: { Authorization: viewer.IdToken }, body: { meta: { a: 'b' } } });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('FORBIDDEN');
  });

  it.skipIf(skip)('signs in a user whose hash is of the old cost (scrypt$N$salt$key) and rehashes it at today\'s', async () => {
    const email = `legacy-${dialect}@example.test`;
    const admin = await engine.login();
    const created = await engine.api('POST', `/organizations/${engine.defaultOrganizationId}/users`, {
      headers: { Authorization: admin.IdToken },
      body: { email, name: 'Lea', password: 'legacy-password', role: 'viewer' },
    });
    expect(created.status).toBe(201);
    // the form a store from before holds: N 2^14, r 8, p 1, made here with node:crypto directly
    const salt = Buffer.from('0123456789abcdef');
    const legacy = `scrypt$16384$${salt.toString('base64url')}$${scryptSync('legacy-password', salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64url')}`;
    await engine.ctx.store.db.updateTable('users').set({ password_hash: legacy }).where('email', '=', email).execute();

    await engine.login(email, 'legacy-password');
    const rehashed = (await findUserByEmail(engine.ctx.store.db, email))!.passwordHash;
    expect(rehashed).not.toBe(legacy);
    expect(rehashed.split('$')).toHaveLength(6);
    expect(passwordNeedsRehash(rehashed)).toBe(false);
    await engine.login(email, 'legacy-password');
    expect((await findUserByEmail(engine.ctx.store.db, email))!.passwordHash).toBe(rehashed);
    const wrong = await engine.api('POST', '/auth/authorize', { body: { email, password: 'legacy-passwore' } });
    expect(wrong.status).toBe(401);
  });
});
