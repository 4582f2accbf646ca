import type { Selectable } from 'kysely';
import type { Db, Tx } from '../../kernel/store/database.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';
import type { Permission } from '../../kernel/http/principal.js';
import { BUILT_IN_ROLES } from './roles.js';

export interface OrganizationTable {
  id: string;
  name: string;
  is_default: number;
  created_at: number;
}
export interface RoleTable {
  id: string;
  organization_id: string;
  name: string;
  permissions: string;
}
export interface UserTable {
  id: string;
  organization_id: string;
  email: string;
  name: string;
  password_hash: string;
  role_id: string;
  is_master: number;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    organizations: OrganizationTable;
    roles: RoleTable;
    users: UserTable;
  }
}

export interface Role {
  guid: string;
  name: string;
  permissions: Permission[];
}

export interface UserWithRole {
  id: string;
  organizationId: string;
  email: string;
  name: string;
  passwordHash: string;
  role: Role;
  isMaster: boolean;
  createdAt: number;
}

export async function findDefaultOrganization(db: Db | Tx): Promise<Selectable<OrganizationTable> | undefined> {
  return db.selectFrom('organizations').selectAll().where('is_default', '=', 1).executeTakeFirst();
}

/** Creates an organization and its built-in roles in one transaction. */
export async function createOrganization(trx: Tx, name: string, isDefault: boolean, now: number): Promise<string> {
  const id = newId();
  await trx.insertInto('organizations').values({ id, name, is_default: isDefault ? 1 : 0, created_at: now }).execute();
  for (const role of BUILT_IN_ROLES) {
    await trx
      .insertInto('roles')
      .values({ id: newId(), organization_id: id, name: role.name, permissions: toJson(role.permissions) })
      .execute();
  }
  return id;
}

export async function listRoles(db: Db | Tx, organizationId: string): Promise<Role[]> {
  const rows = await db.selectFrom('roles').selectAll().where('organization_id', '=', organizationId).orderBy('name').execute();
  return rows.map((row) => ({ guid: row.id, name: row.name, permissions: fromJson<Permission[]>(row.permissions, []) }));
}

export async function findRole(db: Db | Tx, organizationId: string, roleIdOrName: string): Promise<Role | undefined> {
  const roles = await listRoles(db, organizationId);
  return roles.find((role) => role.guid === roleIdOrName || role.name === roleIdOrName);
}

function userQuery(db: Db | Tx) {
  return db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select([
      'users.id as id',
      'users.organization_id as organization_id',
      'users.email as email',
      'users.name as name',
      'users.password_hash as password_hash',
      'users.is_master as is_master',
      'users.created_at as created_at',
      'roles.id as role_id',
      'roles.name as role_name',
      'roles.permissions as role_permissions',
    ]);
}

type UserRow = Awaited<ReturnType<ReturnType<typeof userQuery>['executeTakeFirstOrThrow']>>;

function toUser(row: UserRow): UserWithRole {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    isMaster: row.is_master === 1,
    createdAt: Number(row.created_at),
    role: { guid: row.role_id, name: row.role_name, permissions: fromJson<Permission[]>(row.role_permissions, []) },
  };
}

export async function findUserByEmail(db: Db | Tx, email: string): Promise<UserWithRole | undefined> {
  const row = await userQuery(db).where('users.email', '=', email.toLowerCase()).executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function findUserById(db: Db | Tx, id: string): Promise<UserWithRole | undefined> {
  const row = await userQuery(db).where('users.id', '=', id).executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function listUsers(db: Db, organizationId: string): Promise<UserWithRole[]> {
  const rows = await userQuery(db).where('users.organization_id', '=', organizationId).orderBy('users.created_at').execute();
  return rows.map(toUser);
}

export async function insertUser(
  db: Db | Tx,
  user: { organizationId: string; email: string; name: string; passwordHash: string; roleId: string; isMaster: boolean; now: number },
): Promise<string> {
  const id = newId();
  await db
    .insertInto('users')
    .values({
      id,
      organization_id: user.organizationId,
      email: user.email.toLowerCase(),
      name: user.name,
      password_hash: user.passwordHash,
      role_id: user.roleId,
      is_master: user.isMaster ? 1 : 0,
      created_at: user.now,
    })
    .execute();
  return id;
}

/** The rehash at sign-in: only where the row still holds the hash the password was proven against. */
export async function replacePasswordHash(db: Db | Tx, userId: string, previousHash: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).where('password_hash', '=', previousHash).execute();
}
