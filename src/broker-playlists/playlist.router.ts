import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound, type ErrorCode, type FieldProblem } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { brokerRoute, type RouteSpec } from '../../kernel/http/route.js';
import { attachedMetaProblems } from '../meta-groups/attached-meta.js';
import { ListingStore } from '../broker-listings/listing.store.js';
import type { Db, Tx } from '../../kernel/store/database.js';
import { VodStore } from '../vod/vod.store.js';
import { checkPlayableVod, sourceMeta } from './playable-vod.js';
import { playlistBody, seconds, type Playlist, type PlaylistInput } from './playlist.schema.js';
import { PlaylistStore } from './playlist.store.js';

const guidParams = z.object({ guid: z.string().min(1).max(64) });

function refused(code: ErrorCode, problems: FieldProblem[]): never {
  throw engineError(code, `invalid body: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
}

/**
 * Sources and ads must be playable VODs of the organization, each ad position inside its source (a substituting ad
 * entirely inside it). Codes in order of precedence: UNKNOWN_REFERENCE, SOURCE_NOT_PLAYABLE, AD_OUTSIDE_SOURCE.
 */
async function checkPlaylist(trx: Tx, organizationId: string, input: PlaylistInput): Promise<void> {
  const unknown: FieldProblem[] = [];
  const unplayable: FieldProblem[] = [];
  const outside: FieldProblem[] = [];
  const durations = new Map<string, number | undefined>();
  const duration = async (guid: string, field: string): Promise<number | undefined> => {
    if (!durations.has(guid)) {
      const check = await checkPlayableVod(trx, organizationId, guid);
      if (check.kind === 'missing') unknown.push({ field, message: `VOD ${guid} does not exist` });
      if (check.kind === 'not-playable') unplayable.push({ field, message: `VOD ${guid} is ${check.status}, not encoded and playable` });
      durations.set(guid, check.kind === 'playable' ? check.duration : undefined);
    }
    return durations.get(guid);
  };
  for (const [i, source] of input.sources.entries()) {
    const length = await duration(source.guid, `sources.${i}.guid`);
    for (const [j, ad] of (source.ads ?? []).entries()) {
      const adLength = await duration(ad.guid, `sources.${i}.ads.${j}.guid`);
      if (length === undefined) continue;
      if (ad.start >= length) outside.push({ field: `sources.${i}.ads.${j}.start`, message: `${ad.start} s is not inside the ${seconds(length)} s source` });
      else if (ad.substitute === 1 && adLength !== undefined && ad.start + adLength > length) {
        outside.push({ field: `sources.${i}.ads.${j}.start`, message: `a substituting ${seconds(adLength)} s ad at ${ad.start} s ends after the ${seconds(length)} s source` });
      }
    }
  }
  const meta = await attachedMetaProblems(trx, organizationId, 'playlist asset', input);
  unknown.push(...meta.unknown);
  if (unknown.length) refused('UNKNOWN_REFERENCE', unknown);
  if (meta.invalid.length) refused('VALIDATION_FAILED', meta.invalid);
  if (unplayable.length) refused('SOURCE_NOT_PLAYABLE', unplayable);
  if (outside.length) refused('AD_OUTSIDE_SOURCE', outside);
}

/** The read of spec 4.5: durations computed from the sources (seconds), never taken from a body. */
export async function playlistRead(db: Db, playlist: Playlist): Promise<Record<string, unknown>> {
  const vods = new VodStore(db, () => Date.now());
  const cache = new Map<string, Awaited<ReturnType<VodStore['get']>>>();
  const vod = async (guid: string) => {
    if (!cache.has(guid)) cache.set(guid, await vods.get(guid, playlist.organizationId));
    return cache.get(guid);
  };
  const length = async (guid: string) => {
    const source = await vod(guid);
    return source?.status === 'complete' ? source.records?.durationSec ?? 0 : 0;
  };
  const sources = [];
  let total = 0;
  for (const source of playlist.sources) {
    const duration = await length(source.guid);
    let inserted = 0;
    for (const ad of source.ads ?? []) if (ad.substitute === 0) inserted += await length(ad.guid);
    total += duration + inserted;
    sources.push({ ...source, duration: seconds(duration), totalDuration: seconds(duration + inserted), meta: sourceMeta(await vod(source.guid)) });
  }
  const { organizationId: _org, ...rest } = playlist;
  return { ...rest, sources, duration: seconds(total) };
}

/** Spec 4.5: /broker/playlists and /broker/private/playlists. */
export function playlistRoutes(ctx: EngineContext): RouteSpec[] {
  const { db } = ctx.store;
  const store = new PlaylistStore(db);
  const listings = new ListingStore(db);
  const now = () => ctx.clock.nowMs();
  const log = ctx.logger.child({ component: 'broker-playlists' });
  return [
    ...brokerRoute({
      method: 'post', path: '/playlists', tag: 'broker-playlists', summary: 'Create a playlist (spec 2.10)', body: playlistBody,
      handler: async ({ body, principal }) => {
        const guid = newId();
        await db.transaction().execute(async (trx) => {
          await checkPlaylist(trx, principal!.organizationId, body);
          await store.create(trx, principal!.organizationId, guid, body, now());
        });
        log.info({ guid, sources: body.sources.length }, 'playlist created');
        return { status: true, data: 'Item was created successfully', guid };
      },
    }),
    ...brokerRoute({
      method: 'get', path: '/playlists', tag: 'broker-playlists', summary: 'List playlists with their durations',
      handler: async ({ principal }) => ({
        status: true, data: await Promise.all((await store.list(principal!.organizationId)).map((p) => playlistRead(db, p))),
      }),
    }),
    ...brokerRoute({
      method: 'get', path: '/playlists/:guid', tag: 'broker-playlists', summary: 'Read a playlist with its durations', params: guidParams,
      handler: async ({ params, principal }) => {
        const playlist = await store.get(principal!.organizationId, params.guid);
        if (!playlist) throw notFound('playlist', params.guid);
        return { status: true, data: await playlistRead(db, playlist) };
      },
    }),
    ...brokerRoute({
      method: 'put', path: '/playlists/:guid', tag: 'broker-playlists', summary: 'Replace a playlist (spec 2.10)', params: guidParams, body: playlistBody,
      handler: async ({ params, principal, body }) => {
        const updated = await db.transaction().execute(async (trx) => {
          if (!(await store.get(principal!.organizationId, params.guid, trx))) return false;
          await checkPlaylist(trx, principal!.organizationId, body);
          return store.update(trx, principal!.organizationId, params.guid, body, now());
        });
        if (!updated) throw notFound('playlist', params.guid);
        ctx.services.linear?.invalidate();
        log.info({ guid: params.guid }, 'playlist updated');
        return { status: true, data: 'Item was updated successfully' };
      },
    }),
    ...brokerRoute({
      method: 'delete', path: '/playlists/:guid', tag: 'broker-playlists', summary: 'Delete a playlist no listing names', params: guidParams,
      handler: async ({ params, principal }) => {
        const removed = await db.transaction().execute(async (trx) => {
          if (await listings.playlistInUse(principal!.organizationId, params.guid, trx)) {
            throw engineError('PLAYLIST_IN_USE', `playlist ${params.guid} is named by listings; delete or replace them first`);
          }
          return store.remove(trx, principal!.organizationId, params.guid);
        });
        if (!removed) throw notFound('playlist', params.guid);
        log.info({ guid: params.guid }, 'playlist deleted');
        return { status: true, data: 'Item was deleted successfully' };
      },
    }),
  ];
}
