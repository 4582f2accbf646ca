// Generates console/src/api-types.ts, the shapes the console reads, from the engine's OpenAPI document (GET
// /openapi.json) instead of copying the server's schemas by hand: `npm run gen:console-types`.
// test/api/foundation/console-types.test.ts fails when the committed file is not what this writes.
// Plain TypeScript over the JSON Schemas zod writes (draft 2020-12): no generator package to install.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type Schema = Record<string, unknown>;

export const OUTPUT = 'console/src/api-types.ts';

/**
 * The console's names for parts of the document: an operation's success answer, then a path inside its schema
 * (property names; `[]` for an array's items). A named part met inside another is written as its name.
 */
export const CONSOLE_TYPES: Array<{ name: string; method: string; path: string; at: string[]; doc: string }> = [
  { name: 'Region', method: 'get', path: '/regions', at: ['items', '[]'], doc: 'A region where channels run (GET /regions).' },
  { name: 'BlueprintSummary', method: 'get', path: '/blueprints', at: ['items', '[]'], doc: 'A blueprint of the catalog as listed (GET /blueprints).' },
  { name: 'WorkflowItem', method: 'get', path: '/workflows', at: ['items', '[]'], doc: 'A workflow as listed (GET /workflows).' },
  { name: 'GraphAnswer', method: 'get', path: '/channels/{workflowId}/graphs', at: [], doc: 'Samples of one channel metric (GET /channels/{workflowId}/graphs).' },
  { name: 'Adinsert', method: 'get', path: '/broker/adinserts/{guid}', at: ['data'], doc: 'An ad insertion configuration (GET /broker/adinserts/{guid}).' },
  { name: 'BrokerChannel', method: 'get', path: '/broker/channels/{guid}', at: ['data'], doc: 'A broker channel (GET /broker/channels/{guid}).' },
  { name: 'BrokerKey', method: 'get', path: '/broker/api-keys', at: ['data', '[]'], doc: 'A broker API key (GET /broker/api-keys).' },
  { name: 'Listing', method: 'get', path: '/broker/listings', at: ['data', '[]'], doc: 'A listing of a broker channel; start and end in Unix seconds (GET /broker/listings).' },
  { name: 'UploadSettings', method: 'get', path: '/broker/upload-multipart', at: ['data'], doc: 'Where uploads go (GET /broker/upload-multipart).' },
];

/** The success answer's schema of an operation, and the part of it at `at`. */
function schemaAt(document: Schema, method: string, apiPath: string, at: string[]): Schema {
  const paths = document.paths as Record<string, Record<string, Schema>> | undefined;
  const operation = paths?.[apiPath]?.[method];
  if (!operation) throw new Error(`the document has no ${method.toUpperCase()} ${apiPath}`);
  const responses = operation.responses as Record<string, Schema>;
  const success = Object.entries(responses).find(([status]) => /^2/.test(status))?.[1];
  const content = success?.content as Record<string, { schema?: Schema }> | undefined;
  let schema = content?.['application/json']?.schema;
  if (!schema || Object.keys(schema).length === 0) throw new Error(`${method.toUpperCase()} ${apiPath} documents no answer schema (give its route a response)`);
  for (const step of at) {
    const next: Schema | undefined = step === '[]' ? (schema.items as Schema | undefined) : (schema.properties as Record<string, Schema> | undefined)?.[step];
    if (!next) throw new Error(`${method.toUpperCase()} ${apiPath}: no ${at.join('.')} in the answer schema`);
    schema = next;
  }
  return schema;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** A literal in the project's style: single-quoted strings. */
const literal = (value: unknown): string =>
  typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);

/** TypeScript for one JSON Schema; `named` maps schema objects to the names they are written under. */
function typeOf(schema: Schema, named: Map<Schema, string>, indent: string, top = false): string {
  const name = named.get(schema);
  if (name && !top) return name;
  if (typeof schema.$ref === 'string') return schema.$ref.replace(/^#\/components\/schemas\//, '');
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(union)) return [...new Set(union.map((part) => typeOf(part, named, indent)))].join(' | ');
  if (Array.isArray(schema.type)) return (schema.type as string[]).map((type) => typeOf({ ...schema, type }, named, indent)).join(' | ');
  switch (schema.type) {
    case 'string': return 'string';
    case 'number': case 'integer': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': {
      const items = schema.items as Schema | undefined;
      const item = items ? typeOf(items, named, indent) : 'unknown';
      return /^[\w$.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object': return objectOf(schema, named, indent);
    default: return 'unknown';
  }
}

function objectOf(schema: Schema, named: Map<Schema, string>, indent: string): string {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const extra = schema.additionalProperties;
  if (Object.keys(properties).length === 0) {
    if (extra === false) return 'Record<string, never>';
    const value = extra && typeof extra === 'object' && Object.keys(extra).length > 0 ? typeOf(extra as Schema, named, indent) : 'unknown';
    return `Record<string, ${value}>`;
  }
  const inner = `${indent}  `;
  const lines = Object.entries(properties).map(([key, property]) => {
    const description = typeof property.description === 'string' ? `${inner}/** ${property.description} */\n` : '';
    const name = IDENTIFIER.test(key) ? key : literal(key);
    return `${description}${inner}${name}${required.has(key) ? '' : '?'}: ${typeOf(property, named, inner)};`;
  });
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** The text of console/src/api-types.ts for an OpenAPI document. */
export function renderConsoleTypes(document: Schema): string {
  const named = new Map<Schema, string>();
  const parts = CONSOLE_TYPES.map((entry) => {
    const schema = schemaAt(document, entry.method, entry.path, entry.at);
    named.set(schema, entry.name);
    return { ...entry, schema };
  });
  const info = document.info as { version?: string } | undefined;
  const out = [
    `// Generated by \`npm run gen:console-types\` (scripts/console-types.ts) from the engine's /openapi.json, version ${info?.version ?? '?'}.`,
    '// Do not edit: change the route\'s response schema in src/ and generate again.',
    '',
  ];
  for (const part of parts) {
    const body = typeOf(part.schema, named, '', true);
    out.push(`/** ${part.doc} */`);
    out.push(body.startsWith('{') ? `export interface ${part.name} ${body}` : `export type ${part.name} = ${body};`);
    out.push('');
  }
  return out.join('\n');
}

/** The document of an engine started for the purpose (SQLite in a temporary directory, the api role alone). */
export async function engineOpenApi(): Promise<Schema> {
  const { startEngine } = await import('../wiring/engine.js');
  const { createLogger } = await import('../kernel/core/logger.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-openapi-'));
  const engine = await startEngine({
    env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ENGINE_ADMIN_PASSWORD: 'generating-console-types', PATH: process.env.PATH },
    roles: 'api',
    logger: createLogger('silent'),
  });
  try {
    return (await (await fetch(`${engine.url}/openapi.json`)).json()) as Schema;
  } finally {
    await engine.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const text = renderConsoleTypes(await engineOpenApi());
  fs.writeFileSync(path.join(root, OUTPUT), text);
  process.stdout.write(`wrote ${OUTPUT}\n`);
}
