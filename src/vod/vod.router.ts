// Broker VOD interface (spec 4.7, 2.12): metadata, re-encode, captions, and the open read endpoints of the records.
import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound, type FieldProblem } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { brokerRoute, route, type RouteSpec } from '../../kernel/http/route.js';
import { MetaGroupStore } from '../meta-groups/meta-group.store.js';
import type { Tx } from '../../kernel/store/database.js';
import type { EncodeQueue } from '../../vod-encoder/queue.js';
import { withoutServerPaths } from '../../vod-encoder/errors.js';
import { checkAgainstGroup, guidParams, splitFields, statusQuery, vodMetaBody, vodMetaUpdateBody } from './vod.schema.js';
import type { VodSource } from './vod.store.js';
import type { VodService } from './vod.service.js';

/** GET /broker/vod/list/{guid}/info and the items of GET /broker/vod/list. */
/** A number the packager recorded in an archive's custom_data (an archive has no encode records until it is encoded). */
function listedNumber(source: VodSource, name: 'durationSec' | 'width' | 'height'): number | null {
  const custom = source.meta.custom_data;
  const value = custom && typeof custom === 'object' ? (custom as Record<string, unknown>)[name] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function infoRecord(source: VodSource): Record<string, unknown> {
  const r = source.records;
  return {
    guid: source.guid,
    mediaType: 'source',
    status: source.status,
    // served on an open path: reasons written before paths were kept out of them are cleaned here too
    statusReason: source.statusReason === null ? null : withoutServerPaths(source.statusReason),
    progress: source.progress,
    title: typeof source.meta.title === 'string' ? source.meta.title : null,
    originalFileName: source.originalFileName,
    encode: source.encode,
    meta: source.meta,
    thumbnail: r?.thumbs?.posterUrl ?? null,
    thumbnails: r?.thumbs ?? null,
    hlsUrl: r?.formats.hasHls ? r.formats.hls.cdnUrl : null,
    dashUrl: r?.formats.hasDash ? r.formats.dash.cdnUrl : null,
    mp4Urls: r?.formats.mp4.map((m) => m.cdnUrl) ?? [],
    duration: r ? r.durationSec : listedNumber(source, 'durationSec'),
    width: r ? r.formats.hls.variants.reduce((m, v) => Math.max(m, v.width), 0) : listedNumber(source, 'width'),
    height: r ? r.formats.hls.variants.reduce((m, v) => Math.max(m, v.height), 0) : listedNumber(source, 'height'),
    captions: source.captions?.reason ? { ...source.captions, reason: withoutServerPaths(source.captions.reason) } : source.captions,
    createdAt: new Date(source.createdAt).toISOString(),
    updatedAt: new Date(source.updatedAt).toISOString(),
  };
}

/**
 * A meta-group problem about a custom field stored earlier and not sent now (issue 20, defect 6): say so, under
 * `stored.<name>`, and how to drop it, instead of naming a field the body does not carry. We refuse rather than keep it
 * as a free field: a VOD under a meta group holds only that group's fields, whatever order they were written in.
 */
function storedFieldProblem(problem: FieldProblem, sent: Record<string, unknown>, stored: Record<string, unknown>): FieldProblem {
  const name = problem.field.startsWith('body.') ? problem.field.slice('body.'.length).split('.')[0]! : '';
  if (!name || name in sent || !(name in stored)) return problem;
  const drop = `send "${name}": null to drop it`;
  return problem.message.startsWith('is not a field of the meta group')
    ? { field: `stored.${name}`, message: `is a custom field stored on this VOD earlier and ${problem.message}; ${drop}` }
    : { field: `stored.${name}`, message: `the stored value ${problem.message}; send a new value, or ${drop}` };
}

function invalid(problems: FieldProblem[]): never {
  throw engineError('VALIDATION_FAILED', `invalid body: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
}

const encodeAnswer = z.object({ status: z.literal(true), data: z.object({ guid: z.string(), status: z.string(), jobId: z.string() }) });

export function vodRoutes(ctx: EngineContext, vod: VodService, queue: () => EncodeQueue): RouteSpec[] {
  const { db } = ctx.store;

  /** Meta group problems of a full metadata object (inside the caller's transaction when there is one). */
  async function metaProblems(organizationId: string, meta: Record<string, unknown>, custom: Record<string, unknown>, trx?: Tx): Promise<FieldProblem[]> {
    const groupGuid = meta.selectedMetaGroupGuid;
    if (typeof groupGuid !== 'string' || groupGuid === '') return [];
    const group = await new MetaGroupStore(trx ?? db).get(organizationId, groupGuid);
    if (!group) return [{ field: 'body.selectedMetaGroupGuid', message: `meta group ${groupGuid} does not exist` }];
    return checkAgainstGroup(group, custom);
  }

  const completeSource = async (guid: string): Promise<VodSource & { records: NonNullable<VodSource['records']> }> => {
    const source = await vod.store.get(guid);
    if (!source) throw notFound('VOD', guid);
    if (!source.records) throw engineError('NOT_FOUND', `VOD ${guid} has no encoded formats yet (status ${source.status})`);
    return source as VodSource & { records: NonNullable<VodSource['records']> };
  };

  return [
    ...brokerRoute({
      method: 'post', path: '/vod/meta', tag: 'vod', summary: 'Store VOD metadata (spec 2.12) and get its guid for the upload',
      body: vodMetaBody, successStatus: 201,
      handler: async ({ body, principal }) => {
        const { standard, custom, problems } = splitFields(body);
        const meta: Record<string, unknown> = { type: 'source', ...standard, ...custom };
        delete meta.encode;
        problems.push(...(await metaProblems(principal!.organizationId, meta, custom)));
        if (problems.length > 0) invalid(problems);
        const guid = newId();
        await vod.store.create(principal!.organizationId, guid, meta, standard.encode !== false);
        return { status: true, data: { guid } };
      },
    }),
    ...brokerRoute({
      method: 'put', path: '/vod/list/:guid', tag: 'vod',
      summary: 'Update VOD metadata (merged into the stored fields; custom fields checked against the meta group; a field sent as null is dropped, so a stored free field a newly selected meta group lacks is dropped by sending it as null)',
      params: guidParams, body: vodMetaUpdateBody,
      handler: async ({ body, params, principal }) => {
        const { standard, custom, problems } = splitFields(body);
        if (problems.length > 0) invalid(problems);
        await db.transaction().execute(async (trx) => {
          const source = await vod.store.get(params.guid, principal!.organizationId, trx);
          if (!source) throw notFound('VOD', params.guid);
          const meta: Record<string, unknown> = { ...source.meta, ...standard, ...custom };
          delete meta.encode;
          for (const [k, v] of Object.entries(meta)) if (v === null) delete meta[k];
          const allCustom = splitFields(meta).custom;
          const found = await metaProblems(principal!.organizationId, meta, allCustom, trx);
          if (found.length > 0) invalid(found.map((problem) => storedFieldProblem(problem, custom, source.meta)));
          await vod.store.updateMeta(trx, params.guid, meta, typeof standard.encode === 'boolean' ? standard.encode : source.encode);
        });
        return { status: true, data: 'Source was updated successfully' };
      },
    }),
    ...brokerRoute({
      method: 'post', path: '/vod/encode/:guid', tag: 'vod', summary: 'Encode (or re-encode) the uploaded source', params: guidParams,
      response: encodeAnswer,
      handler: async ({ params, principal }) => {
        const source = await vod.owned(params.guid, principal!.organizationId);
        vod.assertNotBusy(source);
        if (!source.sourceFile) throw engineError('CONFLICT', `VOD ${params.guid} has no uploaded file yet`);
        const jobId = await vod.enqueueEncode(params.guid);
        return { status: true, data: { guid: params.guid, status: 'queued', jobId } };
      },
    }),
    ...brokerRoute({
      method: 'post', path: '/vod/encode/audio/:guid', tag: 'vod', params: guidParams, response: encodeAnswer,
      summary: 'Generate captions from the audio (offline speech recognition) and add them to the HLS master and DASH manifest',
      handler: async ({ params, principal }) => {
        const source = await vod.owned(params.guid, principal!.organizationId);
        if (source.status !== 'complete' || !source.records) {
          throw engineError('CONFLICT', `VOD ${params.guid} is ${source.status}; captions need a complete encode`);
        }
        if (source.captions?.status === 'queued' || source.captions?.status === 'running') {
          throw engineError('CONFLICT', `captions of VOD ${params.guid} are already being generated`);
        }
        await vod.store.setCaptions(params.guid, { status: 'queued' });
        const jobId = await queue().enqueue('captions', { guid: params.guid }).catch(async (error: unknown) => {
          // not left queued: that state refuses every later request for captions
          await vod.store.setCaptions(params.guid, { status: 'error', reason: `the captions job could not be queued: ${error instanceof Error ? error.message : String(error)}` });
          throw error;
        });
        return { status: true, data: { guid: params.guid, status: 'queued', jobId } };
      },
    }),

    // Open reads (spec 5.6).
    route({
      method: 'get', path: '/broker/vod/list', auth: 'none', tag: 'vod', query: statusQuery,
      summary: 'List VOD sources (info records), optionally by status (archive, complete, Encode-later, error, …)',
      handler: async ({ query }) => ({ status: true, data: (await vod.store.list(query.status)).map(infoRecord) }),
    }),
    route({
      method: 'get', path: '/broker/vod/list/:guid/info', auth: 'none', tag: 'vod', params: guidParams,
      summary: 'Detailed information of a VOD: status, progress, metadata, thumbnail and playback URLs',
      handler: async ({ params }) => {
        const source = await vod.store.get(params.guid);
        if (!source) throw notFound('VOD', params.guid);
        return { status: true, data: infoRecord(source) };
      },
    }),
    route({
      method: 'get', path: '/broker/vod/list/:guid', auth: 'none', tag: 'vod', params: guidParams,
      summary: 'Encoded formats record: hasHls, hls, hasDash, dash, hasMp4, mp4, hasThumbs',
      handler: async ({ params }) => ({ status: true, data: (await completeSource(params.guid)).records.formats }),
    }),
    route({
      method: 'get', path: '/broker/vod/list/:guid/hls/:type', auth: 'none', tag: 'vod',
      params: z.object({ guid: z.string().min(1).max(64), type: z.string().min(1).max(128) }),
      summary: 'HLS manifest record of one variant (hls_manifest_<height>_<bitrate>) with segmentsInfo',
      handler: async ({ params }) => {
        const { records } = await completeSource(params.guid);
        const record = records.hlsManifests[params.type];
        if (!record) throw engineError('NOT_FOUND', `VOD ${params.guid} has no HLS manifest ${params.type}; known: ${Object.keys(records.hlsManifests).join(', ')}`);
        return { status: true, data: record };
      },
    }),
    route({
      method: 'get', path: '/broker/vod/list/:guid/hls/:type/segments', auth: 'none', tag: 'vod',
      params: z.object({ guid: z.string().min(1).max(64), type: z.string().min(1).max(128) }),
      summary: 'HLS segment records: hls_segments (all), hls_segments_<n> (one) or hls_manifest_<height>_<bitrate> (all)',
      handler: async ({ params }) => {
        const { records } = await completeSource(params.guid);
        let data = records.hlsSegments;
        if (/^hls_segments_\d+$/.test(params.type)) data = data.filter((s) => s.mediaType === params.type);
        else if (params.type !== 'hls_segments' && !records.hlsManifests[params.type]) data = [];
        if (data.length === 0) throw engineError('NOT_FOUND', `VOD ${params.guid} has no HLS segments ${params.type}`);
        return { status: true, data };
      },
    }),
    route({
      method: 'get', path: '/broker/vod/list/:guid/dash/:type/segments', auth: 'none', tag: 'vod',
      params: z.object({ guid: z.string().min(1).max(64), type: z.string().min(1).max(128) }),
      summary: 'DASH segment records of one Representation (dash_playlist_<height>_<bitrate>) or of all (dash_manifest)',
      handler: async ({ params }) => {
        const { records } = await completeSource(params.guid);
        const data = params.type === 'dash_manifest' ? Object.values(records.dashSegments).flat() : records.dashSegments[params.type];
        if (!data || data.length === 0) {
          throw engineError('NOT_FOUND', `VOD ${params.guid} has no DASH playlist ${params.type}; known: ${Object.keys(records.dashSegments).join(', ')}`);
        }
        return { status: true, data };
      },
    }),
  ];
}
