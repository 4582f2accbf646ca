import { z } from 'zod';
import { notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import type { BlueprintCatalog } from './blueprint.catalog.js';

/** The answer of GET /blueprints (documented only, as every response schema). */
export const blueprintList = z.object({
  items: z.array(z.object({ id: z.string(), name: z.string(), description: z.string(), featured: z.boolean(), tags: z.array(z.string()) })),
});

/** Spec 4.2.1, 4.2.2: the list carries only the summary fields; the detail is the complete blueprint. */
export function blueprintRoutes(catalog: BlueprintCatalog): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/blueprints', tag: 'live', summary: 'List the catalog of blueprints',
      response: blueprintList,
      handler: () => ({
        items: catalog.list().map(({ id, name, description, featured, tags }) => ({ id, name, description, featured, tags })),
      }),
    }),
    route({
      method: 'get', path: '/blueprints/:id', tag: 'live', summary: 'Read a complete blueprint',
      params: z.object({ id: z.string().min(1).max(128) }),
      handler: ({ params }) => {
        const blueprint = catalog.get(params.id);
        if (!blueprint) throw notFound('Blueprint', params.id);
        return blueprint;
      },
    }),
  ];
}
