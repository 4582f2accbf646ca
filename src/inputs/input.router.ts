import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { org } from '../../kernel/http/principal.js';
import { takeUnchanged } from '../http/unchanged-fields.js';
import { createInputBody, INPUT_FIXED_FIELDS, INPUT_VOLATILE_FIELDS, updateInputBody } from './input.schema.js';
import { InputService } from './input.service.js';

const idParams = z.object({ id: z.string().min(1).max(64) });

/** Managed inputs (spec 2.4, 3.4; paths of DESIGN.md). Live answers are bare objects. */
export function inputRoutes(ctx: EngineContext): RouteSpec[] {
  const service = new InputService(ctx);
  return [
    route({
      method: 'post', path: '/inputs', tag: 'inputs', body: createInputBody,
      summary: 'Create a managed input; its ingest address and key are allocated once and kept across channel starts',
      handler: ({ body, principal }) => service.create(org(principal), body),
    }),
    route({
      method: 'get', path: '/inputs', tag: 'inputs', summary: 'List managed inputs with their status',
      handler: async ({ principal }) => ({ items: await service.list(org(principal)) }),
    }),
    route({
      method: 'get', path: '/inputs/:id', tag: 'inputs', params: idParams,
      summary: 'Read a managed input, the workflows configured to use it, and the settings of its device',
      handler: ({ params, principal }) => service.detail(org(principal), params.id),
    }),
    route({
      method: 'put', path: '/inputs/:id', tag: 'inputs', params: idParams, body: updateInputBody,
      summary: 'Edit a managed input (spec 3.4: only when its status is neither ATTACHED nor DETACHED)',
      handler: async ({ params, body, principal }) => {
        const current = await service.detail(org(principal), params.id);
        const change = takeUnchanged(body, { ...current }, INPUT_FIXED_FIELDS, INPUT_VOLATILE_FIELDS);
        return service.update(org(principal), params.id, change);
      },
    }),
    route({
      method: 'delete', path: '/inputs/:id', tag: 'inputs', params: idParams,
      summary: 'Delete a managed input (refused while ACTIVE); a new input may get another address',
      handler: async ({ params, principal }) => {
        await service.remove(org(principal), params.id);
        return { id: params.id, deleted: true };
      },
    }),
  ];
}
