// Generates malformed requests from the OpenAPI document (issue 20 bad-input campaign): wrong types, missing and extra
// fields, huge strings, NUL and lone surrogates, SQL and path-traversal strings in ids, queries and file names.
// Deterministic: the same document gives the same requests, so a failure names a request that can be replayed.

export interface BadRequest {
  label: string;
  method: string;
  /** path with its query, already percent-encoded */
  url: string;
  /** raw JSON text of the body (may be malformed on purpose) */
  body?: string;
  contentType?: string;
}

type Schema = Record<string, unknown>;
interface Operation { parameters?: Array<{ name: string; in: string; schema?: Schema }>; requestBody?: { content?: Record<string, { schema?: Schema }> } }

/** Strings that must never reach a query, a file path or a text column unexamined. */
export const HOSTILE_STRINGS: ReadonlyArray<[string, string]> = [
  ['SQL injection', "' OR '1'='1'; DROP TABLE users; --"],
  ['path traversal', '../../../../etc/passwd'],
  ['a NUL', 'a\u0000b'],
  ['a lone surrogate', 'x\ud800y'],
  ['a huge string', 'x'.repeat(300_000)],
  ['a Windows traversal', '..\\..\\windows\\win.ini'],
];

/** Ids in paths: percent-encoded as a client would send them; some are not even valid UTF-8. */
const HOSTILE_IDS: ReadonlyArray<[string, string]> = [
  ['SQL injection id', encodeURIComponent("1' OR '1'='1")],
  ['traversal id', encodeURIComponent('../../../etc/passwd')],
  ['dot-dot id', '..%2f..%2f..%2fetc%2fpasswd'],
  ['NUL id', 'a%00b'],
  ['invalid UTF-8 id', '%ED%A0%80'],
  ['bad percent id', '%E0%A4%A'],
  ['huge id', 'x'.repeat(6000)],
];

const WRONG_VALUES: ReadonlyArray<[string, (valid: unknown) => unknown]> = [
  ['a wrong type', (valid) => (typeof valid === 'string' ? 12345 : typeof valid === 'number' || typeof valid === 'boolean' ? 'not-a-number' : 'text')],
  ['null', () => null],
  ['an array', () => ['a', 1, null]],
  ['an object', () => ({ $gt: '', nested: { deep: [1] } })],
  ['a huge number', () => 1e308],
  ...HOSTILE_STRINGS.map(([label, value]) => [label, () => value] as [string, (valid: unknown) => unknown]),
  ['missing', () => undefined],
];

/** A plausible value for a JSON Schema, so mutations of one field reach past the checks of the others. */
export function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return 'x';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives?.length) return sample(alternatives.find((a) => a.type !== 'null') ?? alternatives[0], depth + 1);
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      return Object.fromEntries(Object.entries(properties).filter(([name]) => required.has(name)).map(([name, s]) => [name, sample(s, depth + 1)]));
    }
    case 'array':
      return (schema.minItems as number | undefined) ? [sample(schema.items as Schema, depth + 1)] : [];
    case 'integer':
    case 'number':
      return (schema.minimum as number | undefined) ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'email') return 'someone@example.test';
      if (schema.format === 'uri') return 'https://example.test/a';
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema.format === 'date') return '2026-01-01';
      return 'a'.repeat(Math.max(1, (schema.minLength as number | undefined) ?? 1));
    default:
      return 'x';
  }
}

function bodySchema(operation: Operation): Schema | undefined {
  return operation.requestBody?.content?.['application/json']?.schema;
}

/** Every malformed request for one operation; `ids` fills path parameters with real ids where it knows them. */
export function badRequestsFor(method: string, path: string, operation: Operation, ids: (path: string, name: string) => string): BadRequest[] {
  const out: BadRequest[] = [];
  const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path');
  const queryParams = (operation.parameters ?? []).filter((p) => p.in === 'query');
  const fill = (override?: { name: string; value: string }) =>
    path.replace(/\{([^}]+)\}/g, (_m, name: string) => (override?.name === name ? override.value : encodeURIComponent(ids(path, name))));
  const upper = method.toUpperCase();
  const schema = bodySchema(operation);
  const validBody = schema ? sample(schema) : undefined;
  const json = (value: unknown) => JSON.stringify(value);

  // Hostile ids in each path parameter (every method: a DELETE only ever sees hostile ids).
  for (const param of pathParams) {
    for (const [label, value] of HOSTILE_IDS) {
      out.push({ label: `${upper} ${path} with a ${label} in ${param.name}`, method: upper, url: fill({ name: param.name, value }), ...(schema ? { body: json(validBody) } : {}) });
    }
  }
  if (upper === 'DELETE') return out;
  const url = fill();

  // Hostile query values, arrays and objects where a string is expected (the extended query parser builds both).
  for (const param of queryParams) {
    const values = [...HOSTILE_STRINGS.filter(([label]) => label !== 'a huge string').map(([l, v]) => [l, encodeURIComponent(v.replace('\ud800', '?'))] as const),
      ['a NUL', 'a%00b'], ['an array', 'a&' + `${param.name}=b`], ['an object', 'x'], ['invalid UTF-8', '%ED%A0%80']] as Array<readonly [string, string]>;
    for (const [label, value] of values) {
      const query = label === 'an object' ? `${param.name}[a][b]=1` : `${param.name}=${value}`;
      out.push({ label: `${upper} ${path} with ${label} in query ${param.name}`, method: upper, url: `${url}?${query}` });
    }
  }
  if (!schema) {
    // fetch sends no body with GET or HEAD
    if (upper !== 'GET' && upper !== 'HEAD') out.push({ label: `${upper} ${path} with an unexpected body`, method: upper, url, body: json({ unexpected: 'a\u0000' }) });
    return out;
  }

  // Bodies that are not the expected object at all.
  const raw: Array<[string, string, string?]> = [
    ['null', 'null'], ['an array', '[]'], ['a string', '"text"'], ['a number', '42'], ['an empty object', '{}'],
    ['truncated JSON', '{"a":'], ['deep nesting', '['.repeat(5000) + ']'.repeat(5000)],
    ['a __proto__ key', json(validBody).replace(/^\{/, '{"__proto__":{"isAdmin":true},').replace(',}', '}')],
    ['an extra field', json({ ...(validBody as object), unexpectedField: 'x' })],
    ['a text/plain body', json(validBody), 'text/plain'],
  ];
  for (const [label, body, contentType] of raw) {
    out.push({ label: `${upper} ${path} with ${label} as body`, method: upper, url, body, ...(contentType ? { contentType } : {}) });
  }

  // Each field of the body in turn, wrongly typed, hostile or missing; the set of mutations rotates per field.
  const properties = Object.keys((schema.properties ?? {}) as Record<string, Schema>);
  const base = (typeof validBody === 'object' && validBody !== null ? validBody : {}) as Record<string, unknown>;
  properties.forEach((name, index) => {
    const valid = sample((schema.properties as Record<string, Schema>)[name]);
    for (let k = 0; k < 4; k++) {
      const [label, make] = WRONG_VALUES[(index * 4 + k) % WRONG_VALUES.length]!;
      const body = { ...base, [name]: make(valid) };
      if (label === 'missing') delete body[name];
      out.push({ label: `${upper} ${path} with ${label} in body.${name}`, method: upper, url, body: json(body) });
    }
  });
  return out;
}
