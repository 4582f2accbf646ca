import { z } from 'zod';
import { notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import type { BlueprintCatalog } from './blueprint.catalog.js';

/** Spec 4.2.1, 4.2.2: the list carries only the summary fields; the detail is the complete blueprint. */
export function blueprintRoutes(catalog: BlueprintCatalog): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/blueprints', tag: 'live', summary: 'List the catalog of blueprints',
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
