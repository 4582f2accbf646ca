import type { EngineContext } from '../../kernel/context.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';

/** Spec 2.5, 4.2.3: regions come from ENGINE_REGIONS; the first one is the default. */
export function regionRoutes(ctx: EngineContext): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/regions', tag: 'live', summary: 'List the regions where channels run',
      handler: () => ({
        items: ctx.config.regions.map((name) => ({
          name,
          description: name === ctx.config.defaultRegion ? `${name} (default region)` : name,
          default: name === ctx.config.defaultRegion,
        })),
      }),
    }),
  ];
}
