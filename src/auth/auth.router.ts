import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { findUserByEmail, findUserById, replacePasswordHash } from '../organizations/organization.store.js';
import { hashPassword, passwordNeedsRehash, verifyPassword } from './passwords.js';

const authorizeBody = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
});
const refreshBody = z.object({ refreshToken: z.string().min(1).max(512) });

const tokenAnswer = z.object({
  status: z.literal(true),
  data: z.object({
    AccessToken: z.string(),
    ExpiresIn: z.literal(3600),
    TokenType: z.literal('Bearer'),
    RefreshToken: z.string(),
    IdToken: z.string(),
  }),
});

/** Spec 4.1 and 5: the authentication service, mounted on the same server ({auth_url} = {base_url}). */
export function authRoutes(ctx: EngineContext): RouteSpec[] {
  return [
    route({
      method: 'post',
      path: '/auth/authorize',
      auth: 'none',
      tag: 'auth',
      summary: 'Sign in with email and password; returns the ID token, access token and refresh token',
      body: authorizeBody,
      response: tokenAnswer,
      handler: async ({ body, req }) => {
        const email = body.email.trim().toLowerCase();
        const keys = [`email:${email}`, `ip:${req.socket.remoteAddress ?? 'unknown'}`];
        const wait = await ctx.loginLimiter.retryAfterSeconds(keys);
        if (wait > 0) throw engineError('RATE_LIMITED', `too many failed sign-ins; retry in ${wait} s`, { retryAfterSeconds: wait });
        const user = await findUserByEmail(ctx.store.db, email);
        const valid = user ? await verifyPassword(body.password, user.passwordHash) : false;
        if (!user || !valid) {
          await ctx.loginLimiter.recordFailure(keys);
          throw engineError('INVALID_CREDENTIALS');
        }
        await ctx.loginLimiter.reset(`email:${email}`);
        if (passwordNeedsRehash(user.passwordHash)) {
          // a hash of an older cost, brought to today's now that the password is known; a failure keeps the old one
          await hashPassword(body.password)
            .then((hash) => replacePasswordHash(ctx.store.db, user.id, user.passwordHash, hash))
            .catch((error: unknown) => ctx.logger.warn({ err: error, userId: user.id }, 'could not rehash a password'));
        }
        return { status: true, data: await ctx.tokens.issue(user) };
      },
    }),
    route({
      method: 'post',
      path: '/auth/refresh',
      auth: 'none',
      tag: 'auth',
      summary: 'Exchange a refresh token for new tokens; the refresh token rotates and a reused one is refused',
      body: refreshBody,
      response: tokenAnswer,
      handler: async ({ body }) => ({
        status: true,
        data: await ctx.tokens.refresh(body.refreshToken, (id) => findUserById(ctx.store.db, id)),
      }),
    }),
  ];
}
