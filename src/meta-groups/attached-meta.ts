// Custom metadata of channels, playlists and listings (issue 15): `meta` values, checked against the meta group named by
// `selectedMetaGroupGuid` when there is one (spec 2.14, 4.7 "Custom metadata"); without a group any named values pass.
import { z } from 'zod';
import type { FieldProblem } from '../../kernel/core/errors.js';
import type { Db, Tx } from '../../kernel/store/database.js';
import { META_GROUP_ATTACHMENTS, validateAgainstMetaGroup } from './meta-group.schema.js';
import { MetaGroupStore } from './meta-group.store.js';

export type AttachmentName = (typeof META_GROUP_ATTACHMENTS)[number]['name'];

const CUSTOM_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** The two body fields every resource with custom metadata takes. */
export const attachedMetaShape = {
  selectedMetaGroupGuid: z.string().min(1).max(64).optional(),
  meta: z.record(z.string().regex(CUSTOM_NAME, 'custom field names are letters, digits, _ and -'), z.unknown())
    .refine((m) => JSON.stringify(m).length <= 65_536, 'custom metadata is at most 64 KiB of JSON').optional(),
};

/** How a resource's custom metadata is stored (its `meta` column, JSON). */
export interface StoredMeta { selectedMetaGroupGuid?: string; values: Record<string, unknown> }

export function attachmentGuid(name: AttachmentName): string {
  return META_GROUP_ATTACHMENTS.find((a) => a.name === name)!.guid;
}

/**
 * Problems of `meta` against the selected group: `unknown` when the group does not exist, `invalid` when it attaches
 * elsewhere or a value breaks its rules or is not one of its fields.
 */
export async function attachedMetaProblems(
  db: Db | Tx, organizationId: string, attachment: AttachmentName,
  input: { selectedMetaGroupGuid?: string | undefined; meta?: Record<string, unknown> | undefined }, prefix = '',
): Promise<{ unknown: FieldProblem[]; invalid: FieldProblem[] }> {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const guid = input.selectedMetaGroupGuid;
  if (!guid) return { unknown: [], invalid: [] };
  const group = await new MetaGroupStore(db).get(organizationId, guid);
  if (!group) return { unknown: [{ field: at('selectedMetaGroupGuid'), message: `meta group ${guid} does not exist` }], invalid: [] };
  const problems: FieldProblem[] = [];
  if (group.attachment !== attachmentGuid(attachment)) {
    problems.push({ field: at('selectedMetaGroupGuid'), message: `the meta group is not attached to ${attachment}s` });
  }
  const meta = input.meta ?? {};
  problems.push(...validateAgainstMetaGroup(group, meta, at('meta')));
  const defined = new Set(group.fields.map((f) => f.name));
  for (const name of Object.keys(meta)) {
    if (!defined.has(name)) problems.push({ field: at(`meta.${name}`), message: `is not a field of the meta group ${group.name}` });
  }
  return { unknown: [], invalid: problems };
}
