import type { IncomingHttpHeaders } from 'node:http';
import type { EngineContext } from '../../kernel/context.js';
import { engineError } from '../../kernel/core/errors.js';
import type { AuthMode } from '../../kernel/http/route.js';
import type { Principal } from '../../kernel/http/principal.js';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Spec 5: the ID token goes in Authorization (with or without "Bearer "), the API key in X-Api-Key. */
export async function resolvePrincipal(ctx: EngineContext, headers: IncomingHttpHeaders, mode: AuthMode): Promise<Principal | undefined> {
  if (mode === 'none') return undefined;
  const authorization = header(headers, 'authorization')?.trim();
  const apiKey = header(headers, 'x-api-key')?.trim();
  if (mode === 'apiKey') {
    if (!apiKey) {
      // say what was wrong with what was sent: nothing at all, or an ID token where a key belongs
      if (authorization) throw engineError('WRONG_AUTH_SCHEME', 'private paths take an API key in the X-Api-Key header, not an ID token');
      throw engineError('UNAUTHENTICATED', 'no credentials were sent: private paths take an API key in the X-Api-Key header');
    }
    return principalFromKey(ctx, apiKey);
  }
  if (mode === 'idToken') {
    if (!authorization) {
      if (apiKey) throw engineError('WRONG_AUTH_SCHEME', 'this path takes the ID token in the Authorization header; API keys go to /broker/private/… paths');
      throw engineError('UNAUTHENTICATED', 'no credentials were sent: this path takes the ID token in the Authorization header');
    }
    return ctx.tokens.verifyIdToken(stripBearer(authorization));
  }
  if (apiKey) return principalFromKey(ctx, apiKey);
  if (authorization) return ctx.tokens.verifyIdToken(stripBearer(authorization));
  throw engineError('UNAUTHENTICATED', 'no credentials were sent: send the ID token in Authorization or an API key in X-Api-Key');
}

function stripBearer(value: string): string {
  return value.replace(/^Bearer\s+/i, '');
}

async function principalFromKey(ctx: EngineContext, value: string): Promise<Principal> {
  const key = await ctx.apiKeys.findActiveByValue(value);
  if (!key) throw engineError('INVALID_API_KEY');
  // Spec 5.3: a key has no method restrictions.
  return {
    organizationId: key.organizationId,
    userId: undefined,
    role: 'api-key',
    permissions: ['read', 'write'],
    scheme: 'apiKey',
    apiKeyId: key.id,
  };
}
