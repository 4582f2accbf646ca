import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { notFound } from '../../kernel/core/errors.js';
import { brokerRoute, type RouteSpec } from '../../kernel/http/route.js';
import type { AdinsertCache } from './adinsert-lookup.js';
import { adinsertCreateBody, adinsertRead, adinsertUpdateBody, toRead } from './adinsert.schema.js';
import type { AdinsertStore } from './adinsert.store.js';

const guidParams = z.object({ guid: z.string().min(1).max(64) });
const envelope = (data: z.ZodType) => z.object({ status: z.literal(true), data });

/** Spec 4.6: /broker/adinserts and /broker/private/adinserts. */
export function adinsertRoutes(ctx: EngineContext, store: AdinsertStore, lookup: AdinsertCache): RouteSpec[] {
  const now = () => ctx.clock.nowMs();
  const read = (c: Parameters<typeof toRead>[0]) => toRead(c, ctx.config.publicUrl);
  return [
    ...brokerRoute({
      method: 'post', path: '/adinserts', tag: 'adinserts', summary: 'Create an ad-insertion configuration',
      body: adinsertCreateBody, response: z.object({ status: z.literal(true), data: z.string(), guid: z.string() }),
      handler: async ({ body, principal }) => {
        const created = await store.create(principal!.organizationId, body, now());
        return { status: true, data: 'Item was created successfully', guid: created.guid };
      },
    }),
    ...brokerRoute({
      method: 'get', path: '/adinserts', tag: 'adinserts', summary: 'List ad-insertion configurations',
      response: envelope(z.array(adinsertRead)),
      handler: async ({ principal }) => ({ status: true, data: (await store.list(principal!.organizationId)).map(read) }),
    }),
    ...brokerRoute({
      method: 'get', path: '/adinserts/:guid', tag: 'adinserts', summary: 'Read an ad-insertion configuration',
      params: guidParams, response: envelope(adinsertRead),
      handler: async ({ params, principal }) => {
        const config = await store.get(principal!.organizationId, params.guid);
        if (!config) throw notFound('adinsert', params.guid);
        return { status: true, data: read(config) };
      },
    }),
    ...brokerRoute({
      method: 'put', path: '/adinserts/:guid', tag: 'adinserts', summary: 'Update an ad-insertion configuration',
      params: guidParams, body: adinsertUpdateBody,
      handler: async ({ params, principal, body }) => {
        if (!(await store.update(principal!.organizationId, params.guid, body, now()))) throw notFound('adinsert', params.guid);
        lookup.invalidate(params.guid);
        return { status: true, data: 'Item was updated successfully' };
      },
    }),
    ...brokerRoute({
      method: 'delete', path: '/adinserts/:guid', tag: 'adinserts', summary: 'Delete an ad-insertion configuration',
      params: guidParams,
      handler: async ({ params, principal }) => {
        if (!(await store.remove(principal!.organizationId, params.guid))) throw notFound('adinsert', params.guid);
        lookup.invalidate(params.guid);
        return { status: true, data: 'Item was deleted successfully' };
      },
    }),
  ];
}
