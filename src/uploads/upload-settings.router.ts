// GET /broker/upload-multipart (spec 2.13): the upload settings, translated to this engine's own store.
import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { brokerRoute, type RouteSpec } from '../../kernel/http/route.js';
import { SOURCES_BUCKET } from '../vod/vod.service.js';

const settings = z.object({
  status: z.literal(true),
  data: z.object({
    identityProviderRegion: z.string(),
    bucket: z.string(),
    bucketRegion: z.string(),
    identityPoolId: z.string(),
    logins: z.object({ identityProvider: z.string() }),
  }),
});

/**
 * identityProviderRegion / bucketRegion: the engine's default region (ENGINE_REGIONS); bucket: the source store
 * (`sources`, files under DATA_DIR/uploads); identityPoolId: the tus endpoint that takes the upload, on the same
 * authentication scheme as the caller; logins.identityProvider: the auth URL that issues the ID token.
 */
export function uploadSettingsRoutes(ctx: EngineContext): RouteSpec[] {
  return brokerRoute({
    method: 'get', path: '/upload-multipart', tag: 'uploads', response: settings,
    summary: 'Upload settings: region, source bucket, the tus upload endpoint (identityPoolId) and the auth URL',
    handler: ({ req }) => {
      const base = ctx.config.publicUrl;
      const isPrivate = req.path.startsWith('/broker/private/');
      return {
        status: true,
        data: {
          identityProviderRegion: ctx.config.defaultRegion,
          bucket: SOURCES_BUCKET,
          bucketRegion: ctx.config.defaultRegion,
          identityPoolId: `${base}${isPrivate ? '/broker/private/upload' : '/broker/upload'}`,
          logins: { identityProvider: base },
        },
      };
    },
  });
}
