import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { notFound } from '../../kernel/core/errors.js';
import { assertRawUnchanged } from '../http/unchanged-fields.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { assertOwnOrganization, organizationParams } from '../organizations/organization.router.js';
import { META_GROUP_ATTACHMENTS, metaGroupBody } from './meta-group.schema.js';
import { MetaGroupStore } from './meta-group.store.js';

const groupParams = organizationParams.extend({ metaGroupGuid: z.string().min(1).max(64) });

/** Spec 2.14 and 4.1 ("Store new Meta Group", "List all Meta Group Attachments per organization"). */
/** Read-only fields of GET a PUT may carry unchanged. */
const META_GROUP_FIXED = { guid: 'it is the id of the meta group', createdAt: 'it is the creation time' } as const;

export function metaGroupRoutes(ctx: EngineContext): RouteSpec[] {
  const groups = new MetaGroupStore(ctx.store.db);
  const now = () => ctx.clock.nowMs();
  return [
    route({
      method: 'get', path: '/organizations/:guid/meta-group-attachments', tag: 'meta-groups',
      summary: 'List the attachment types a meta group can attach to', params: organizationParams,
      handler: ({ params, principal }) => {
        assertOwnOrganization(principal, params.guid);
        return { status: true, data: META_GROUP_ATTACHMENTS };
      },
    }),
    route({
      method: 'post', path: '/organizations/:guid/meta-groups', tag: 'meta-groups', successStatus: 201,
      summary: 'Store a new meta group', params: organizationParams, body: metaGroupBody,
      handler: async ({ params, principal, body }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const group = await groups.create(orgId, body, now());
        return { status: true, data: 'Item was created successfully', guid: group.guid };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/meta-groups', tag: 'meta-groups',
      summary: 'List meta groups', params: organizationParams, query: z.object({ attachment: z.string().optional() }),
      handler: async ({ params, principal, query }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: await groups.list(orgId, query.attachment) };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/meta-groups/:metaGroupGuid', tag: 'meta-groups',
      summary: 'Read a meta group', params: groupParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const group = await groups.get(orgId, params.metaGroupGuid);
        if (!group) throw notFound('meta group', params.metaGroupGuid);
        return { status: true, data: group };
      },
    }),
    route({
      method: 'put', path: '/organizations/:guid/meta-groups/:metaGroupGuid', tag: 'meta-groups',
      summary: 'Replace a meta group', params: groupParams, body: metaGroupBody,
      handler: async ({ params, principal, body, req }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const current = await groups.get(orgId, params.metaGroupGuid);
        if (!current) throw notFound('meta group', params.metaGroupGuid);
        assertRawUnchanged(req.body, { ...current }, META_GROUP_FIXED);
        if (!(await groups.update(orgId, params.metaGroupGuid, body, now()))) throw notFound('meta group', params.metaGroupGuid);
        return { status: true, data: 'Item was updated successfully' };
      },
    }),
    route({
      method: 'delete', path: '/organizations/:guid/meta-groups/:metaGroupGuid', tag: 'meta-groups',
      summary: 'Delete a meta group', params: groupParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        if (!(await groups.remove(orgId, params.metaGroupGuid))) throw notFound('meta group', params.metaGroupGuid);
        return { status: true, data: 'Item was deleted successfully' };
      },
    }),
  ];
}
