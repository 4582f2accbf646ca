import { assertRawUnchanged } from '../http/unchanged-fields.js';
import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { AdinsertStore } from '../adinserts/adinsert.store.js';
import type { AdinsertConfig } from '../adinserts/adinsert.schema.js';
import { engineError, notFound, type ErrorCode, type FieldProblem } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { brokerRoute, type RouteSpec } from '../../kernel/http/route.js';
import { attachedMetaProblems } from '../meta-groups/attached-meta.js';
import type { Db, Tx } from '../../kernel/store/database.js';
import { channelBody, channelRead, type BrokerChannel, type ChannelInput, type ChannelRead } from './broker-channel.schema.js';
import { BrokerChannelStore } from './broker-channel.store.js';
import { canSee, channelReader, type ChannelReader } from './channel-access.js';
import { adinsertMismatch, playbackUrl, streamUrl } from './playback-url.js';

export const channelParams = z.object({ guid: z.string().min(1).max(64) });
const envelope = (data: z.ZodType) => z.object({ status: z.literal(true), data });

function refused(code: ErrorCode, problems: FieldProblem[]): never {
  throw engineError(code, `invalid body: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
}

async function missingIds(db: Db | Tx, table: 'users' | 'roles', organizationId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const found = await db.selectFrom(table).select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  const known = new Set(found.map((r) => r.id));
  return ids.filter((id) => !known.has(id));
}

/** Every reference of the body: users, roles, the adinsert (and that it fits the stream), the meta group. */
async function checkReferences(trx: Tx, organizationId: string, input: ChannelInput, stream: string): Promise<void> {
  const unknown: FieldProblem[] = [];
  for (const [field, table] of [['allowedForUsers', 'users'], ['allowedForRoles', 'roles'], ['restrictedFor', 'users']] as const) {
    const missing = await missingIds(trx, table, organizationId, input[field] ?? []);
    if (missing.length) unknown.push({ field, message: `no ${table === 'users' ? 'user' : 'role'} of the organization: ${missing.join(', ')}` });
  }
  let adinsert: AdinsertConfig | undefined;
  if (input.adinsert !== undefined) {
    adinsert = await new AdinsertStore(trx).get(organizationId, input.adinsert);
    if (!adinsert) unknown.push({ field: 'adinsert', message: `ad-insertion configuration ${input.adinsert} does not exist` });
  }
  const meta = await attachedMetaProblems(trx, organizationId, 'channel asset', input);
  unknown.push(...meta.unknown);
  if (unknown.length) refused('UNKNOWN_REFERENCE', unknown);
  if (meta.invalid.length) refused('VALIDATION_FAILED', meta.invalid);
  const mismatch = input.hasAds === 1 && adinsert ? adinsertMismatch(stream, adinsert) : undefined;
  if (mismatch) refused('ADINSERT_MISMATCH', [{ field: 'adinsert', message: mismatch }]);
}

/** What the channel routes and the listings share: the caller's visible channel, or 404. */
export interface ChannelAccess {
  store: BrokerChannelStore;
  visible(organizationId: string, reader: ChannelReader, guid: string): Promise<BrokerChannel>;
}

export function channelAccess(ctx: EngineContext): ChannelAccess {
  const store = new BrokerChannelStore(ctx.store.db);
  return {
    store,
    visible: async (organizationId, reader, guid) => {
      const channel = await store.get(organizationId, guid);
      // A channel the access lists hide answers like an unknown one: its existence is not confirmed.
      if (!channel || !canSee(channel, reader)) throw notFound('channel', guid);
      return channel;
    },
  };
}

/** Spec 4.3: /broker/channels and /broker/private/channels. */
export function brokerChannelRoutes(ctx: EngineContext, access: ChannelAccess): RouteSpec[] {
  const { db } = ctx.store;
  const { store } = access;
  const now = () => ctx.clock.nowMs();
  const log = ctx.logger.child({ component: 'broker-channels' });
  const adinserts = new AdinsertStore(db);
  const publicUrl = ctx.config.publicUrl;

  async function read(channel: BrokerChannel): Promise<ChannelRead> {
    const stream = streamUrl(channel, publicUrl, ctx.vault);
    const adinsert = channel.hasAds === 1 && channel.adinsert ? await adinserts.get(channel.organizationId, channel.adinsert) : undefined;
    const { organizationId: _org, ...rest } = channel;
    return { ...rest, playbackUrl: playbackUrl(stream, channel, publicUrl, adinsert) };
  }

  return [
    ...brokerRoute({
      method: 'post', path: '/channels', tag: 'broker-channels', summary: 'Create a broker channel (spec 2.8)',
      body: channelBody, response: z.object({ status: z.literal(true), data: z.string(), guid: z.string() }),
      handler: async ({ body, principal }) => {
        const organizationId = principal!.organizationId;
        const guid = newId();
        const stream = streamUrl({ guid, type: body.type, ...(body.externalUrl ? { externalUrl: body.externalUrl } : {}) }, publicUrl, ctx.vault);
        await db.transaction().execute(async (trx) => {
          await checkReferences(trx, organizationId, body, stream);
          await store.create(trx, organizationId, guid, body, now());
        });
        log.info({ guid, type: body.type, hasAds: body.hasAds }, 'broker channel created');
        return { status: true, data: 'Item was created successfully', guid };
      },
    }),
    ...brokerRoute({
      method: 'get', path: '/channels', tag: 'broker-channels', summary: 'List the broker channels the caller may see',
      response: envelope(z.array(channelRead)),
      handler: async ({ principal }) => {
        const reader = await channelReader(db, principal!);
        const visible = (await store.list(principal!.organizationId)).filter((c) => canSee(c, reader));
        return { status: true, data: await Promise.all(visible.map(read)) };
      },
    }),
    ...brokerRoute({
      method: 'get', path: '/channels/:guid', tag: 'broker-channels', summary: 'Read a broker channel with its playback URL',
      params: channelParams, response: envelope(channelRead),
      handler: async ({ params, principal }) => {
        const channel = await access.visible(principal!.organizationId, await channelReader(db, principal!), params.guid);
        return { status: true, data: await read(channel) };
      },
    }),
    ...brokerRoute({
      method: 'put', path: '/channels/:guid', tag: 'broker-channels', summary: 'Replace a broker channel (spec 2.8)',
      params: channelParams, body: channelBody,
      handler: async ({ params, principal, body, req }) => {
        const organizationId = principal!.organizationId;
        const current = await access.visible(organizationId, await channelReader(db, principal!), params.guid);
        // GET's answer may come back: its guid and creation time unchanged (issue 20, defect 5).
        assertRawUnchanged(req.body, { guid: current.guid, createdAt: current.createdAt }, { guid: 'it is the id of the channel', createdAt: 'it is the creation time' });
        const stream = streamUrl({ guid: params.guid, type: body.type, ...(body.externalUrl ? { externalUrl: body.externalUrl } : {}) }, publicUrl, ctx.vault);
        const updated = await db.transaction().execute(async (trx) => {
          await checkReferences(trx, organizationId, body, stream);
          return store.update(trx, organizationId, params.guid, body, now());
        });
        if (!updated) throw notFound('channel', params.guid);
        ctx.services.linear?.invalidate(params.guid);
        log.info({ guid: params.guid }, 'broker channel updated');
        return { status: true, data: 'Item was updated successfully' };
      },
    }),
    ...brokerRoute({
      method: 'delete', path: '/channels/:guid', tag: 'broker-channels', summary: 'Delete a broker channel and its listings',
      params: channelParams,
      handler: async ({ params, principal }) => {
        const organizationId = principal!.organizationId;
        await access.visible(organizationId, await channelReader(db, principal!), params.guid);
        if (!(await store.remove(organizationId, params.guid))) throw notFound('channel', params.guid);
        ctx.services.linear?.invalidate(params.guid);
        log.info({ guid: params.guid }, 'broker channel deleted');
        return { status: true, data: 'Item was deleted successfully' };
      },
    }),
  ];
}
