import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import type { Principal } from '../../kernel/http/principal.js';
import { hashPassword } from '../auth/passwords.js';
import { findRole, findUserByEmail, insertUser, listRoles, listUsers, findUserById } from './organization.store.js';

export const organizationParams = z.object({ guid: z.string().min(1).max(64) });

/** Another organization's guid answers 404, never 403: ids of others are not confirmed to exist. */
export function assertOwnOrganization(principal: Principal | undefined, guid: string): string {
  if (!principal || principal.organizationId !== guid) throw notFound('organization', guid);
  return guid;
}

const createUserBody = z.object({
  email: z.email().max(320),
  name: z.string().min(1).max(128),
  password: z.string().min(8, 'at least 8 characters').max(1024),
  role: z.string().min(1).max(64).describe('a role guid or name from GET /organizations/{guid}/roles'),
});

function userView(user: { id: string; email: string; name: string; role: { guid: string; name: string }; isMaster: boolean; createdAt: number }) {
  return { guid: user.id, email: user.email, name: user.name, role: user.role.name, roleGuid: user.role.guid, master: user.isMaster, createdAt: user.createdAt };
}

export function organizationRoutes(ctx: EngineContext): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: '/organizations/:guid/users',
      tag: 'organizations',
      summary: "List the organization's users",
      params: organizationParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: (await listUsers(ctx.store.db, orgId)).map(userView) };
      },
    }),
    route({
      method: 'post',
      path: '/organizations/:guid/users',
      tag: 'organizations',
      summary: 'Add a user with a role',
      permission: 'admin',
      params: organizationParams,
      body: createUserBody,
      successStatus: 201,
      handler: async ({ params, principal, body }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const role = await findRole(ctx.store.db, orgId, body.role);
        if (!role) throw engineError('VALIDATION_FAILED', `role ${body.role} does not exist`, { fields: [{ field: 'role', message: 'unknown role' }] });
        const exists = () => engineError('ALREADY_EXISTS', `a user with email ${body.email} exists`);
        if (await findUserByEmail(ctx.store.db, body.email)) throw exists();
        const passwordHash = await hashPassword(body.password);
        const id = await insertUser(ctx.store.db, {
          organizationId: orgId,
          email: body.email,
          name: body.name,
          passwordHash,
          roleId: role.guid,
          isMaster: false,
          now: ctx.clock.nowMs(),
        }).catch(async (error: unknown) => {
          // the unique email column refused the row: a concurrent request created the user first
          if (await findUserByEmail(ctx.store.db, body.email)) throw exists();
          throw error;
        });
        const user = await findUserById(ctx.store.db, id);
        return { status: true, data: 'Item was created successfully', guid: id, user: user ? userView(user) : undefined };
      },
    }),
    route({
      method: 'get',
      path: '/organizations/:guid/roles',
      tag: 'organizations',
      summary: "List the organization's roles and their permissions",
      params: organizationParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: await listRoles(ctx.store.db, orgId) };
      },
    }),
  ];
}
