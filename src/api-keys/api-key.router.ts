import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { notFound } from '../../kernel/core/errors.js';
import { fixedFieldsShape, takeUnchanged } from '../http/unchanged-fields.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { org } from '../../kernel/http/principal.js';
import type { ApiKey } from './api-key.store.js';

const keyName = z.string().trim().min(1).max(128);
const idParams = z.object({ id: z.string().min(1).max(64) });
const guidParams = z.object({ guid: z.string().min(1).max(64) });

const brokerView = (key: ApiKey) => ({ name: key.name, guid: key.id, active: key.active ? 1 : 0, value: key.value });
/** The answer of GET /broker/api-keys, items of brokerView (documented only, as every response schema). */
export const brokerKeyList = z.object({
  status: z.literal(true),
  data: z.array(z.object({ name: z.string(), guid: z.string(), active: z.union([z.literal(0), z.literal(1)]), value: z.string() })),
});
const liveView = (key: ApiKey) => ({ name: key.name, enabled: key.active, id: key.id, value: key.value });
/** Fields of GET a PUT may carry unchanged (issue 20, defect 5); a new value is a new key. */
const KEY_VALUE = 'a key value cannot be changed: create a new key and delete this one';
const BROKER_KEY_FIXED = { guid: 'it is the id of the key', value: KEY_VALUE } as const;
const LIVE_KEY_FIXED = { id: 'it is the id of the key', value: KEY_VALUE } as const;

/**
 * Spec 2.7, 4.1, 5.4: issuing and managing keys needs an ID token with the admin permission
 * (a key cannot mint keys). Broker keys answer in the broker envelope, live keys as bare objects.
 */
export function apiKeyRoutes(ctx: EngineContext): RouteSpec[] {
  const keys = ctx.apiKeys;
  const now = () => ctx.clock.nowMs();
  return [
    route({
      method: 'post', path: '/broker/api-keys', auth: 'idToken', permission: 'admin', tag: 'api-keys',
      summary: 'Create a broker API key; read its value with GET on the returned url',
      body: z.object({ name: keyName, active: z.boolean() }),
      successStatus: 201,
      handler: async ({ body, principal }) => {
        const key = await keys.create({ organizationId: org(principal), kind: 'broker', name: body.name, active: body.active, ...(principal?.userId ? { createdBy: principal.userId } : {}), now: now() });
        return { status: true, data: 'Item was created successfully', url: `${ctx.config.publicUrl}/broker/api-keys/${key.id}`, guid: key.id };
      },
    }),
    route({
      method: 'get', path: '/broker/api-keys', auth: 'idToken', permission: 'admin', tag: 'api-keys',
      summary: 'List broker API keys', response: brokerKeyList,
      handler: async ({ principal }) => ({ status: true, data: (await keys.list(org(principal), 'broker')).map(brokerView) }),
    }),
    route({
      method: 'get', path: '/broker/api-keys/:guid', auth: 'idToken', permission: 'admin', tag: 'api-keys',
      summary: 'Read a broker API key with its value', params: guidParams,
      handler: async ({ params, principal }) => {
        const key = await keys.get(org(principal), 'broker', params.guid);
        if (!key) throw notFound('API key', params.guid);
        return { status: true, data: brokerView(key) };
      },
    }),
    route({
      method: 'put', path: '/broker/api-keys/:guid', auth: 'idToken', permission: 'admin', tag: 'api-keys',
      summary: 'Rename, activate or deactivate a broker API key', params: guidParams,
      body: z.object({ name: keyName.optional(), active: z.union([z.boolean(), z.literal(0), z.literal(1)]).optional(), ...fixedFieldsShape(BROKER_KEY_FIXED) })
        .refine((b) => b.name !== undefined || b.active !== undefined, 'give name or active'),
      handler: async ({ params, body: sent, principal }) => {
        const current = await keys.get(org(principal), 'broker', params.guid);
        if (!current) throw notFound('API key', params.guid);
        const body = takeUnchanged(sent, brokerView(current), BROKER_KEY_FIXED);
        const change = { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.active !== undefined ? { active: Boolean(body.active) } : {}) };
        const key = await keys.update(org(principal), 'broker', params.guid, change, now());
        if (!key) throw notFound('API key', params.guid);
        return { status: true, data: 'Item was updated successfully' };
      },
    }),
    route({
      method: 'delete', path: '/broker/api-keys/:guid', auth: 'idToken', permission: 'admin', tag: 'api-keys',
      summary: 'Delete a broker API key; it is refused at once', params: guidParams,
      handler: async ({ params, principal }) => {
        if (!(await keys.remove(org(principal), 'broker', params.guid))) throw notFound('API key', params.guid);
        return { status: true, data: 'Item was deleted successfully' };
      },
    }),
    route({
      method: 'post', path: '/api-keys', permission: 'admin', tag: 'api-keys',
      summary: 'Create a live API key', body: z.object({ name: keyName, enabled: z.boolean().optional() }),
      handler: async ({ body, principal }) =>
        liveView(await keys.create({ organizationId: org(principal), kind: 'live', name: body.name, active: body.enabled ?? true, ...(principal?.userId ? { createdBy: principal.userId } : {}), now: now() })),
    }),
    route({
      method: 'get', path: '/api-keys', permission: 'admin', tag: 'api-keys', summary: 'List live API keys',
      handler: async ({ principal }) => ({ items: (await keys.list(org(principal), 'live')).map(liveView) }),
    }),
    route({
      method: 'get', path: '/api-keys/:id', permission: 'admin', tag: 'api-keys', summary: 'Read a live API key', params: idParams,
      handler: async ({ params, principal }) => {
        const key = await keys.get(org(principal), 'live', params.id);
        if (!key) throw notFound('API key', params.id);
        return liveView(key);
      },
    }),
    route({
      method: 'put', path: '/api-keys/:id', permission: 'admin', tag: 'api-keys',
      summary: 'Rename, enable or disable a live API key', params: idParams,
      body: z.object({ name: keyName.optional(), enabled: z.boolean().optional(), ...fixedFieldsShape(LIVE_KEY_FIXED) })
        .refine((b) => b.name !== undefined || b.enabled !== undefined, 'give name or enabled'),
      handler: async ({ params, body: sent, principal }) => {
        const current = await keys.get(org(principal), 'live', params.id);
        if (!current) throw notFound('API key', params.id);
        const body = takeUnchanged(sent, liveView(current), LIVE_KEY_FIXED);
        const change = { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.enabled !== undefined ? { active: body.enabled } : {}) };
        const key = await keys.update(org(principal), 'live', params.id, change, now());
        if (!key) throw notFound('API key', params.id);
        return liveView(key);
      },
    }),
    route({
      method: 'delete', path: '/api-keys/:id', permission: 'admin', tag: 'api-keys', summary: 'Delete a live API key', params: idParams,
      handler: async ({ params, principal }) => {
        if (!(await keys.remove(org(principal), 'live', params.id))) throw notFound('API key', params.id);
        return { id: params.id, deleted: true };
      },
    }),
  ];
}
