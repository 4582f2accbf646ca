import type { EngineContext } from '../../kernel/context.js';
import { generatePassword, hashPassword, passwordNeedsRehash, verifyPassword } from '../auth/passwords.js';
import { createOrganization, findDefaultOrganization, findRole, findUserByEmail } from './organization.store.js';

/**
 * First start: the default organization, its roles and the master account. A password set in
 * ENGINE_ADMIN_PASSWORD wins on every start; without one a password is generated and printed once.
 */
export async function ensureDefaultOrganization(ctx: EngineContext): Promise<{ organizationId: string; generatedPassword?: string }> {
  const now = ctx.clock.nowMs();
  const { db } = ctx.store;
  let generatedPassword: string | undefined;
  const organizationId = await db.transaction().execute(async (trx) => {
    const existing = await findDefaultOrganization(trx);
    const orgId = existing?.id ?? (await createOrganization(trx, 'default', true, now));
    const admin = await findRole(trx, orgId, 'admin');
    if (!admin) throw new Error('the admin role is missing from the default organization');
    const master = await findUserByEmail(trx, ctx.config.adminEmail);
    if (!master) {
      const password = ctx.config.adminPassword ?? generatePassword();
      if (!ctx.config.adminPassword) generatedPassword = password;
      await trx
        .insertInto('users')
        .values({
          id: crypto.randomUUID(),
          organization_id: orgId,
          email: ctx.config.adminEmail.toLowerCase(),
          name: 'master',
          password_hash: await hashPassword(password),
          role_id: admin.guid,
          is_master: 1,
          created_at: now,
        })
        .execute();
    } else if (ctx.config.adminPassword && (passwordNeedsRehash(master.passwordHash) || !(await verifyPassword(ctx.config.adminPassword, master.passwordHash)))) {
      await trx.updateTable('users').set({ password_hash: await hashPassword(ctx.config.adminPassword) }).where('id', '=', master.id).execute();
    }
    return orgId;
  });
  return generatedPassword ? { organizationId, generatedPassword } : { organizationId };
}
