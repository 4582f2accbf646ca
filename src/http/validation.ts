import type { z } from 'zod';
import { engineError, type FieldProblem } from '../core/errors.js';

/** Parses one part of a request; a failure lists every bad field by its path (DESIGN.md: list every bad field). */
export function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, part: 'body' | 'query' | 'params'): z.output<S> {
  if (!schema) return value as z.output<S>;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields: FieldProblem[] = result.error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join('.') : part,
    message: issue.message,
  }));
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  throw engineError('VALIDATION_FAILED', `invalid ${part}: ${summary}`, { fields });
}
