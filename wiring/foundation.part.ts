import type { EnginePart } from '../kernel/part.js';
import { authRoutes } from '../src/auth/auth.router.js';
import { organizationRoutes } from '../src/organizations/organization.router.js';
import { apiKeyRoutes } from '../src/api-keys/api-key.router.js';
import { metaGroupRoutes } from '../src/meta-groups/meta-group.router.js';
import { imageMetaRoutes } from '../src/images/image-meta.router.js';

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
