import { z } from 'zod';
import type { FieldProblem } from '../../kernel/core/errors.js';

/** Spec 2.14: the four attachment types, with guids that never change. */
export const META_GROUP_ATTACHMENTS = [
  { guid: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a01', name: 'video asset' },
  { guid: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a02', name: 'playlist asset' },
  { guid: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a03', name: 'channel asset' },
  { guid: '6f1d3a52-7c1e-4b8e-9a41-0c7e2d1b5a04', name: 'listing asset' },
] as const;

export const VIDEO_ATTACHMENT_GUID = META_GROUP_ATTACHMENTS[0].guid;

/** Standard video fields of 2.12 (and record keys) that a custom field may not shadow. */
export const RESERVED_FIELD_NAMES = new Set([
  'description', 'type', 'title', 'originalFileName', 'imageUrl', 'custom_data', 'group', 'genre',
  'selectedMetaGroupGuid', 'guid', 'status', 'mediaType', 'meta', 'thumbnail', 'hls', 'dash', 'mp4',
  'createdAt', 'updatedAt', 'duration', 'encode',
]);

export const FIELD_TYPES = ['string', 'number', 'enum', 'boolean', 'json'] as const;

export const metaFieldSchema = z
  .object({
    name: z.string().trim().regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter or _'),
    type: z.enum(FIELD_TYPES),
    required: z.boolean().default(false),
    min: z.number().int().min(0).optional(),
    max: z.number().int().min(0).optional(),
    additionalData: z.object({ enumOptions: z.array(z.string().min(1)).optional() }).loose().optional(),
  })
  .superRefine((field, check) => {
    if (RESERVED_FIELD_NAMES.has(field.name)) {
      check.addIssue({ code: 'custom', path: ['name'], message: `${field.name} is a reserved standard field name` });
    }
    if (field.min !== undefined && field.max !== undefined && field.min > field.max) {
      check.addIssue({ code: 'custom', path: ['min'], message: 'min must not exceed max' });
    }
    if (field.type === 'enum') {
      const options = field.additionalData?.enumOptions ?? [];
      if (options.length === 0) check.addIssue({ code: 'custom', path: ['additionalData', 'enumOptions'], message: 'an enum needs at least one option' });
      if (new Set(options).size !== options.length) check.addIssue({ code: 'custom', path: ['additionalData', 'enumOptions'], message: 'enum options must be unique' });
    }
  });

export type MetaField = z.output<typeof metaFieldSchema>;

export const metaGroupBody = z
  .object({
    attachment: z.enum(META_GROUP_ATTACHMENTS.map((a) => a.guid) as [string, ...string[]], { message: 'an attachment guid from meta-group-attachments' }),
    name: z.string().trim().min(1).max(128),
    fields: z.array(metaFieldSchema).max(200),
  })
  .superRefine((group, check) => {
    const seen = new Set<string>();
    group.fields.forEach((field, index) => {
      if (seen.has(field.name)) check.addIssue({ code: 'custom', path: ['fields', index, 'name'], message: `field name ${field.name} is used twice` });
      seen.add(field.name);
    });
  });

export type MetaGroupInput = z.output<typeof metaGroupBody>;

export interface MetaGroup extends MetaGroupInput {
  guid: string;
  createdAt: number;
  updatedAt: number;
}

function lengthOf(value: unknown): number {
  return typeof value === 'string' ? [...value].length : JSON.stringify(value).length;
}

/**
 * Checks custom values against a meta group; the one validator VOD metadata, playlists, channels and
 * listings call. min/max count characters (spec 2.14) of strings, enums and JSON text.
 * Returns every problem, prefixed with `pathPrefix` (e.g. "body").
 */
export function validateAgainstMetaGroup(group: Pick<MetaGroup, 'fields'>, values: Record<string, unknown>, pathPrefix = ''): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const at = (name: string) => (pathPrefix ? `${pathPrefix}.${name}` : name);
  for (const field of group.fields) {
    const value = values[field.name];
    if (value === undefined || value === null || value === '') {
      if (field.required) problems.push({ field: at(field.name), message: 'is required by the meta group' });
      continue;
    }
    let typeOk = true;
    switch (field.type) {
      case 'string':
        typeOk = typeof value === 'string';
        break;
      case 'number':
        typeOk = typeof value === 'number' && Number.isFinite(value);
        break;
      case 'boolean':
        typeOk = typeof value === 'boolean';
        break;
      case 'enum':
        typeOk = typeof value === 'string' && (field.additionalData?.enumOptions ?? []).includes(value);
        break;
      case 'json':
        typeOk = typeof value === 'object' || typeof value === 'string';
        if (typeof value === 'string') {
          try {
            JSON.parse(value);
          } catch {
            typeOk = false;
          }
        }
        break;
    }
    if (!typeOk) {
      const expected = field.type === 'enum' ? `one of ${(field.additionalData?.enumOptions ?? []).join(', ')}` : `a ${field.type}`;
      problems.push({ field: at(field.name), message: `must be ${expected}` });
      continue;
    }
    if (field.type === 'string' || field.type === 'json' || field.type === 'enum') {
      const length = lengthOf(value);
      if (field.min !== undefined && length < field.min) problems.push({ field: at(field.name), message: `must have at least ${field.min} characters` });
      if (field.max !== undefined && length > field.max) problems.push({ field: at(field.name), message: `must have at most ${field.max} characters` });
    }
  }
  return problems;
}
