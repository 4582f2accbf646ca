import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Clock } from '../../kernel/core/clock.js';
import type { Db } from '../../kernel/store/database.js';
import { engineError } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { PERMISSIONS, type Permission, type Principal } from '../../kernel/http/principal.js';
import { JWT_ALGORITHM, type SigningKey } from './signing-keys.js';
import type { UserWithRole } from '../organizations/organization.store.js';

export interface RefreshTokenTable {
  token_hash: string;
  family_id: string;
  user_id: string;
  expires_at: number;
  used_at: number | null;
  revoked: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    refresh_tokens: RefreshTokenTable;
  }
}

export const ID_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_MS = 30 * 24 * 3600 * 1000;
const ISSUER = 'media-pipeline-engine';

export interface TokenSet {
  AccessToken: string;
  ExpiresIn: number;
  TokenType: 'Bearer';
  RefreshToken: string;
  IdToken: string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

export class TokenService {
  constructor(
    private readonly db: Db,
    private readonly key: SigningKey,
    private readonly clock: Clock,
  ) {}

  async issue(user: UserWithRole, familyId: string = newId()): Promise<TokenSet> {
    const nowSeconds = Math.floor(this.clock.nowMs() / 1000);
    const sign = (tokenUse: 'id' | 'access', claims: Record<string, unknown>) =>
      new SignJWT({ ...claims, token_use: tokenUse })
        .setProtectedHeader({ alg: JWT_ALGORITHM, kid: this.key.kid, typ: 'JWT' })
        .setIssuer(ISSUER)
        .setSubject(user.id)
        .setIssuedAt(nowSeconds)
        .setExpirationTime(nowSeconds + ID_TOKEN_SECONDS)
        .setJti(newId())
        .sign(this.key.privateKey);
    const IdToken = await sign('id', {
      organization: user.organizationId,
      email: user.email,
      name: user.name,
      role: user.role.name,
      role_guid: user.role.guid,
      permissions: user.role.permissions,
    });
    const AccessToken = await sign('access', { organization: user.organizationId, scope: user.role.permissions.join(' ') });
    const RefreshToken = randomBytes(32).toString('base64url');
    await this.db
      .insertInto('refresh_tokens')
      .values({
        token_hash: sha256(RefreshToken),
        family_id: familyId,
        user_id: user.id,
        expires_at: this.clock.nowMs() + REFRESH_TOKEN_MS,
        used_at: null,
        revoked: 0,
      })
      .execute();
    return { AccessToken, ExpiresIn: ID_TOKEN_SECONDS, TokenType: 'Bearer', RefreshToken, IdToken };
  }

  /**
   * Rotates a refresh token: the old one is spent; presenting a spent one again revokes its whole family
   * (a stolen token and its legitimate twin both stop working).
   */
  async refresh(refreshToken: string, loadUser: (id: string) => Promise<UserWithRole | undefined>): Promise<TokenSet> {
    const hash = sha256(refreshToken);
    const now = this.clock.nowMs();
    const claimed = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
      if (!row) return { outcome: 'unknown' as const };
      if (row.revoked === 1 || row.used_at !== null) {
        await trx.updateTable('refresh_tokens').set({ revoked: 1 }).where('family_id', '=', row.family_id).execute();
        return { outcome: 'reused' as const };
      }
      if (Number(row.expires_at) <= now) return { outcome: 'expired' as const };
      const spent = await trx
        .updateTable('refresh_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(spent.numUpdatedRows) !== 1) return { outcome: 'reused' as const };
      return { outcome: 'ok' as const, row };
    });
    if (claimed.outcome === 'reused') throw engineError('INVALID_TOKEN', 'refreshToken was already used; sign in again');
    if (claimed.outcome !== 'ok') throw engineError('INVALID_TOKEN', `refreshToken is ${claimed.outcome}`);
    const user = await loadUser(claimed.row.user_id);
    if (!user) throw engineError('INVALID_TOKEN', 'refreshToken belongs to a removed user');
    return this.issue(user, claimed.row.family_id);
  }

  /** Verifies an ID token (signature, algorithm, issuer, expiry) and returns its principal. */
  async verifyIdToken(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, this.key.publicKey, {
        algorithms: [JWT_ALGORITHM],
        issuer: ISSUER,
        currentDate: this.clock.now(),
      });
      if (payload.token_use !== 'id') throw engineError('INVALID_TOKEN', 'Authorization must carry the IdToken');
      const permissions = Array.isArray(payload.permissions)
        ? payload.permissions.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(String(p)))
        : [];
      if (typeof payload.organization !== 'string' || typeof payload.sub !== 'string') {
        throw engineError('INVALID_TOKEN', 'the token lacks its organization');
      }
      return {
        organizationId: payload.organization,
        userId: payload.sub,
        role: typeof payload.role === 'string' ? payload.role : 'viewer',
        permissions,
        scheme: 'idToken',
      };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw engineError('INVALID_TOKEN', 'the ID token has expired; refresh it');
      if (error instanceof joseErrors.JOSEError) throw engineError('INVALID_TOKEN', 'the ID token is invalid');
      throw error;
    }
  }
}
