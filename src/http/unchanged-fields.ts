// "PUT what GET returned" (issue 20, defect 5): a PUT may carry the fields it cannot change (fixed at creation, or
// read-only in GET's answer) as long as they are unchanged; a change is refused naming the field and saying why.
import { z } from 'zod';
import { engineError, type FieldProblem } from '../../kernel/core/errors.js';

/** Field name → why a PUT cannot change it (shown in the 400). */
export type FixedFields = Readonly<Record<string, string>>;

/** Schema entries that let a strict PUT body carry the fixed fields; the handler checks them with takeUnchanged(). */
export function fixedFieldsShape<F extends FixedFields, V extends string = never>(
  fields: F, volatile: readonly V[] = [],
): { [K in (keyof F & string) | V]: z.ZodOptional<z.ZodUnknown> } {
  return Object.fromEntries([
    ...Object.entries(fields).map(([name, why]) => [name, z.unknown().describe(`accepted only unchanged: ${why}`).optional()] as const),
    ...volatile.map((name) => [name, z.unknown().describe('read-only state kept by the engine; ignored in a PUT').optional()] as const),
  ]) as { [K in (keyof F & string) | V]: z.ZodOptional<z.ZodUnknown> };
}

/** JSON with sorted keys, so two equal objects compare equal whatever their key order; null and absent are the same. */
function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/**
 * The body without its fixed and volatile fields, after checking each fixed one sent equals the current value
 * (`current` is what GET answers for the resource). Volatile fields (state the engine moves on its own, such as a
 * status) are dropped whatever their value: a GET-then-PUT client did not change them. Throws 400 VALIDATION_FAILED
 * naming every changed fixed field.
 */
export function takeUnchanged<B extends Record<string, unknown>>(
  body: B, current: Record<string, unknown>, fields: FixedFields, volatile: readonly string[] = [],
): Partial<B> {
  const problems: FieldProblem[] = [];
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    const why = fields[name];
    if (volatile.includes(name)) continue;
    if (why === undefined) rest[name] = value;
    else if (value !== undefined && !sameValue(value, current[name])) {
      problems.push({ field: name, message: `cannot change (it is ${JSON.stringify(current[name] ?? null)}): ${why}` });
    }
  }
  if (problems.length > 0) {
    throw engineError('VALIDATION_FAILED', `invalid body: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
  }
  return rest as Partial<B>;
}

/**
 * For a PUT whose body schema drops unknown keys: checks GET's fixed fields on the raw request body, so a changed id is
 * refused rather than silently ignored.
 */
export function assertRawUnchanged(rawBody: unknown, current: Record<string, unknown>, fields: FixedFields): void {
  const raw = typeof rawBody === 'object' && rawBody !== null ? (rawBody as Record<string, unknown>) : {};
  takeUnchanged(Object.fromEntries(Object.keys(fields).map((name) => [name, raw[name]])), current, fields);
}
