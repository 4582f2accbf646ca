import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';

/** The answer of GET /regions (documented only, as every response schema). */
export const regionList = z.object({ items: z.array(z.object({ name: z.string(), description: z.string(), default: z.boolean() })) });

/** Spec 2.5, 4.2.3: regions come from ENGINE_REGIONS; the first one is the default. */
export function regionRoutes(ctx: EngineContext): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/regions', tag: 'live', summary: 'List the regions where channels run',
      response: regionList,
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
