import type { EnginePart } from './part.js';
import { authRoutes } from './auth/auth.router.js';
import { organizationRoutes } from './organizations/organization.router.js';
import { apiKeyRoutes } from './api-keys/api-key.router.js';
import { metaGroupRoutes } from './meta-groups/meta-group.router.js';
import { imageMetaRoutes } from './images/image-meta.router.js';

export const foundationPart: EnginePart = {
  name: 'foundation',
  roles: ['api'],
  routes: (ctx) => [
    ...authRoutes(ctx),
    ...organizationRoutes(ctx),
    ...apiKeyRoutes(ctx),
    ...metaGroupRoutes(ctx),
    ...imageMetaRoutes(ctx),
  ],
};
