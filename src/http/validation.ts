import type { z } from 'zod';
import { engineError, type FieldProblem } from '../../kernel/core/errors.js';

const NUL_MESSAGE = 'contains a NUL character (\\u0000), which no text field accepts';
const SURROGATE_MESSAGE = 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text';

// String.prototype.isWellFormed is ES2024, past this project's lib target; the same test as a regex (no `u` flag: code units).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a string cannot be stored as text, or undefined when it can. One rule for both dialects: PostgreSQL refuses
 * NUL in text (a 500 before this check) and both stores silently alter lone surrogates (issue 20, defect 1).
 */
export function badTextReason(value: string): string | undefined {
  if (value.includes('\u0000')) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(value)) return SURROGATE_MESSAGE;
  return undefined;
}

/** Every string (and object key) in a parsed request part that is not storable text, by its field path. */
export function findBadText(value: unknown, path: string[] = [], found: FieldProblem[] = [], depth = 0): FieldProblem[] {
  const field = (p: string[]) => p.join('.');
  if (typeof value === 'string') {
    const reason = badTextReason(value);
    if (reason) found.push({ field: field(path), message: reason });
  } else if (Array.isArray(value)) {
    // Depth is bounded by the JSON body limit; the guard keeps a pathological nesting from overflowing the stack.
    if (depth < 64) value.forEach((item, index) => findBadText(item, [...path, String(index)], found, depth + 1));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const reason = badTextReason(key);
      // A bad key cannot be echoed as a field name: it is shown escaped.
      if (reason) found.push({ field: field([...path, JSON.stringify(key).slice(1, -1)]), message: `is a key that ${reason}` });
      else if (depth < 64) findBadText(item, [...path, key], found, depth + 1);
    }
  }
  return found;
}

/** Parses one part of a request; a failure lists every bad field by its path (DESIGN.md: list every bad field). */
export function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, part: 'body' | 'query' | 'params'): z.output<S> {
  const textProblems = findBadText(value).map((p) => ({ field: p.field || part, message: p.message }));
  if (!schema && textProblems.length === 0) return value as z.output<S>;
  const result = schema?.safeParse(value);
  if (result?.success && textProblems.length === 0) return result.data;
  const schemaProblems: FieldProblem[] = (result && !result.success ? result.error.issues : []).map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join('.') : part,
    message: issue.message,
  }));
  const flagged = new Set(textProblems.map((p) => p.field));
  const fields = [...textProblems, ...schemaProblems.filter((p) => !flagged.has(p.field))];
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  throw engineError('VALIDATION_FAILED', `invalid ${part}: ${summary}`, { fields });
}
