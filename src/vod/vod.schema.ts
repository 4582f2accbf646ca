// VOD metadata of spec 2.12: the standard fields, `encode`, and custom fields checked against a meta group.
import { z } from 'zod';
import type { FieldProblem } from '../../kernel/core/errors.js';
import { RESERVED_FIELD_NAMES, validateAgainstMetaGroup, VIDEO_ATTACHMENT_GUID, type MetaGroup } from '../meta-groups/meta-group.schema.js';
import { VOD_STATUSES } from './vod.store.js';

/** The standard fields of 2.12 plus `encode`; everything else in a body is a custom field. */
export const STANDARD_FIELDS = ['description', 'type', 'title', 'originalFileName', 'imageUrl', 'custom_data', 'group', 'genre',
  'selectedMetaGroupGuid', 'encode'] as const;
const STANDARD = new Set<string>(STANDARD_FIELDS);
const CUSTOM_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

const text = (max: number) => z.string().max(max);
const standardShape = {
  description: text(10_000).optional(),
  type: z.literal('source', { message: "type is 'source' for a VOD source" }).optional(),
  title: text(1024).optional(),
  originalFileName: text(1024).optional(),
  imageUrl: z.union([z.url({ protocol: /^https?$/ }), z.literal('')]).optional(),
  custom_data: z.union([z.string().max(100_000), z.record(z.string(), z.unknown())]).optional(),
  group: text(256).optional(),
  genre: text(256).optional(),
  selectedMetaGroupGuid: z.string().min(1).max(64).optional(),
  /** false: the upload is stored and waits in status Encode-later until POST …/vod/encode/{guid}. */
  encode: z.boolean().optional(),
};

/** POST …/vod/meta: standard fields of 2.12 and any custom fields (validated by the handler). */
export const vodMetaBody = z.object(standardShape).catchall(z.unknown());
/** PUT …/vod/list/{guid}: the same fields, merged into the stored ones; a custom field set to null is removed. */
export const vodMetaUpdateBody = z.object(standardShape).catchall(z.unknown());

export const guidParams = z.object({ guid: z.string().min(1).max(64) });
export const statusQuery = z.object({ status: z.enum(VOD_STATUSES).optional() });

/** Splits a body into standard and custom fields; reserved or malformed custom names are problems. */
export function splitFields(body: Record<string, unknown>): { standard: Record<string, unknown>; custom: Record<string, unknown>; problems: FieldProblem[] } {
  const standard: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  const problems: FieldProblem[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined) continue;
    if (STANDARD.has(name)) standard[name] = value;
    else if (RESERVED_FIELD_NAMES.has(name)) problems.push({ field: `body.${name}`, message: `${name} is a reserved standard field name and cannot be a custom field` });
    else if (!CUSTOM_NAME.test(name)) problems.push({ field: `body.${name}`, message: 'custom field names are letters, digits, _ and -, starting with a letter or _' });
    else custom[name] = value;
  }
  return { standard, custom, problems };
}

/** Custom fields against the selected meta group: every group rule, and no field the group does not define. */
export function checkAgainstGroup(group: MetaGroup, custom: Record<string, unknown>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (group.attachment !== VIDEO_ATTACHMENT_GUID) {
    problems.push({ field: 'body.selectedMetaGroupGuid', message: 'the meta group is not attached to video assets' });
  }
  problems.push(...validateAgainstMetaGroup(group, custom, 'body'));
  const defined = new Set(group.fields.map((f) => f.name));
  for (const name of Object.keys(custom)) {
    if (!defined.has(name)) problems.push({ field: `body.${name}`, message: `is not a field of the meta group ${group.name}` });
  }
  return problems;
}
