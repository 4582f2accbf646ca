import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { notFound } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';

export interface ImageMetaTable {
  id: string;
  organization_id: string;
  meta: string;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    image_metas: ImageMetaTable;
  }
}

const imageMetaBody = z.object({
  meta: z
    .record(z.string().min(1).max(256), z.string().max(4096))
    .refine((meta) => Object.keys(meta).length > 0, 'meta needs at least one key/value pair')
    .refine((meta) => Object.keys(meta).length <= 200, 'meta takes at most 200 pairs'),
});
const guidParams = z.object({ guid: z.string().min(1).max(64) });

/** Spec 4.7: image metadata, on /images/meta (ID token) and /images/private/meta (API key). */
export function imageMetaRoutes(ctx: EngineContext): RouteSpec[] {
  const { db } = ctx.store;
  const variants = ['/images/meta', '/images/private/meta'];
  return variants.flatMap((base) => [
    route({
      method: 'post', path: base, tag: 'images', successStatus: 201,
      summary: 'Store image metadata (string key/value pairs)', body: imageMetaBody,
      handler: async ({ body, principal }) => {
        const id = newId();
        await db.insertInto('image_metas').values({ id, organization_id: principal!.organizationId, meta: toJson(body.meta), created_at: ctx.clock.nowMs() }).execute();
        return { status: true, data: 'Item was created successfully', guid: id };
      },
    }),
    route({
      method: 'get', path: `${base}/:guid`, tag: 'images', summary: 'Read image metadata', params: guidParams,
      handler: async ({ params, principal }) => {
        const row = await db.selectFrom('image_metas').selectAll().where('id', '=', params.guid).where('organization_id', '=', principal!.organizationId).executeTakeFirst();
        if (!row) throw notFound('image metadata', params.guid);
        return { status: true, data: { guid: row.id, meta: fromJson<Record<string, string>>(row.meta, {}), createdAt: Number(row.created_at) } };
      },
    }),
  ]);
}
