import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, type ErrorCode, type FieldProblem } from '../../kernel/core/errors.js';
import { brokerRoute, type RouteSpec } from '../../kernel/http/route.js';
import { attachedMetaProblems } from '../meta-groups/attached-meta.js';
import type { ChannelAccess } from '../broker-channels/broker-channel.router.js';
import { channelReader } from '../broker-channels/channel-access.js';
import { checkPlayableVod } from '../broker-playlists/playable-vod.js';
import { PlaylistStore } from '../broker-playlists/playlist.store.js';
import type { Tx } from '../../kernel/store/database.js';
import { listingList, listingsBatchBody, unixSeconds, type ListingsBatch } from './listing.schema.js';
import { ListingStore } from './listing.store.js';

/** A listing range query: at most a year and a day (the longest EPG a client asks for at once). */
const MAX_RANGE_SECONDS = 367 * 86_400;
const rangeQuery = z.object({
  channel: z.string().min(1).max(64),
  start: z.coerce.number().pipe(unixSeconds),
  end: z.coerce.number().pipe(unixSeconds),
}).superRefine((q, check) => {
  if (q.end <= q.start) check.addIssue({ code: 'custom', path: ['end'], message: 'must be after start' });
});

function refused(code: ErrorCode, problems: FieldProblem[]): never {
  throw engineError(code, `invalid body: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
}

/** The conditions of spec 4.4 (start < end is checked by the schema): first start = range start, each start = previous end, last end = range end. */
export function contiguityProblems(batch: ListingsBatch): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const first = batch.listings[0];
  const last = batch.listings.at(-1);
  if (first && first.start !== batch.start) problems.push({ field: 'listings.0.start', message: `must equal the range start ${batch.start}` });
  batch.listings.forEach((l, i) => {
    const previous = batch.listings[i - 1];
    if (previous && l.start !== previous.end) problems.push({ field: `listings.${i}.start`, message: `must equal the end of listing ${i - 1} (${previous.end})` });
    if (l.channel !== undefined && l.channel !== batch.channel) problems.push({ field: `listings.${i}.channel`, message: 'must be the channel of the batch' });
  });
  if (last && last.end !== batch.end) problems.push({ field: `listings.${batch.listings.length - 1}.end`, message: `must equal the range end ${batch.end}` });
  return problems;
}

async function checkReferences(trx: Tx, organizationId: string, batch: ListingsBatch): Promise<void> {
  const unknown: FieldProblem[] = [];
  const invalid: FieldProblem[] = [];
  const unplayable: FieldProblem[] = [];
  const playlists = new PlaylistStore(trx);
  for (const [i, l] of batch.listings.entries()) {
    if (l.playlist !== undefined && !(await playlists.get(organizationId, l.playlist, trx))) {
      unknown.push({ field: `listings.${i}.playlist`, message: `playlist ${l.playlist} does not exist` });
    }
    if (l.vod !== undefined) {
      const check = await checkPlayableVod(trx, organizationId, l.vod);
      if (check.kind === 'missing') unknown.push({ field: `listings.${i}.vod`, message: `VOD ${l.vod} does not exist` });
      if (check.kind === 'not-playable') unplayable.push({ field: `listings.${i}.vod`, message: `VOD ${l.vod} is ${check.status}, not encoded and playable` });
    }
    const meta = await attachedMetaProblems(trx, organizationId, 'listing asset', l, `listings.${i}`);
    unknown.push(...meta.unknown);
    invalid.push(...meta.invalid);
  }
  if (unknown.length) refused('UNKNOWN_REFERENCE', unknown);
  if (invalid.length) refused('VALIDATION_FAILED', invalid);
  if (unplayable.length) refused('SOURCE_NOT_PLAYABLE', unplayable);
}

/** Spec 4.4 plus list and delete in a time range: /broker/listings… and /broker/private/listings…. */
export function listingRoutes(ctx: EngineContext, access: ChannelAccess): RouteSpec[] {
  const { db } = ctx.store;
  const store = new ListingStore(db);
  const log = ctx.logger.child({ component: 'broker-listings' });
  const range = (q: z.output<typeof rangeQuery>) => {
    if (q.end - q.start > MAX_RANGE_SECONDS) throw engineError('RANGE_TOO_LONG', `a listing range is at most ${MAX_RANGE_SECONDS} s`);
  };
  return [
    ...brokerRoute({
      method: 'post', path: '/listings/multiple', tag: 'broker-listings', body: listingsBatchBody,
      summary: "Replace a channel's listings in [start, end) by a contiguous batch (spec 4.4), atomically",
      handler: async ({ body, principal }) => {
        const organizationId = principal!.organizationId;
        await access.visible(organizationId, await channelReader(db, principal!), body.channel);
        const gaps = contiguityProblems(body);
        if (gaps.length) refused('LISTINGS_NOT_CONTIGUOUS', gaps);
        await db.transaction().execute(async (trx) => {
          await checkReferences(trx, organizationId, body);
          await store.replaceRange(trx, organizationId, body.channel, body.start, body.end, body.listings, ctx.clock.nowMs());
        });
        ctx.services.linear?.invalidate(body.channel);
        log.info({ channel: body.channel, start: body.start, end: body.end, listings: body.listings.length }, 'listings replaced');
        return { status: true, data: 'Item was created successfully' };
      },
    }),
    ...brokerRoute({
      method: 'get', path: '/listings', tag: 'broker-listings', query: rangeQuery, response: listingList,
      summary: "A channel's listings overlapping [start, end) (Unix seconds), by start",
      handler: async ({ query, principal }) => {
        range(query);
        await access.visible(principal!.organizationId, await channelReader(db, principal!), query.channel);
        return { status: true, data: await store.list(query.channel, query.start, query.end) };
      },
    }),
    ...brokerRoute({
      method: 'delete', path: '/listings', tag: 'broker-listings', query: rangeQuery,
      summary: "Clear a channel's listings in [start, end): inside ones go, ones crossing an edge are trimmed",
      handler: async ({ query, principal }) => {
        range(query);
        const organizationId = principal!.organizationId;
        await access.visible(organizationId, await channelReader(db, principal!), query.channel);
        const touched = await db.transaction().execute((trx) => store.clearRange(trx, organizationId, query.channel, query.start, query.end));
        ctx.services.linear?.invalidate(query.channel);
        log.info({ channel: query.channel, start: query.start, end: query.end, touched }, 'listings cleared');
        return { status: true, data: 'Item was deleted successfully', touched };
      },
    }),
  ];
}
