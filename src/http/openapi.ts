import { z } from 'zod';
import type { RouteSpec } from '../../kernel/http/route.js';
import { authModeForPath } from '../../kernel/http/route.js';
import { rawPaths } from './openapi-raw-paths.js';

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  // Transforms and refinements have no JSON Schema form; `unrepresentable: 'any'` keeps the document whole.
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonObject;
}

const errorSchema = {
  type: 'object',
  required: ['status', 'code', 'description'],
  properties: {
    status: { const: false },
    code: { type: 'string' },
    description: { type: 'string' },
    fields: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } },
  },
};

/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests, plus the raw paths (playback,
 * media, uploads, health, metrics) described by hand. `metricsToken`: /metrics asks for a bearer token.
 */
export function buildOpenApi(routes: RouteSpec[], publicUrl: string, options: { metricsToken?: boolean } = {}): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = rawPaths(options.metricsToken ? [{ metricsToken: [] }] : []);
  for (const spec of routes) {
    const openPath = spec.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const mode = spec.auth ?? authModeForPath(spec.path);
    const parameters: JsonObject[] = [];
    for (const [location, schema] of [['path', spec.params], ['query', spec.query]] as const) {
      if (!schema) continue;
      const doc = jsonSchema(schema, 'input');
      const properties = (doc.properties ?? {}) as Record<string, JsonObject>;
      const required = new Set((doc.required as string[] | undefined) ?? []);
      for (const [name, property] of Object.entries(properties)) {
        parameters.push({ name, in: location, required: location === 'path' || required.has(name), schema: property });
      }
    }
    const security =
      mode === 'none' ? [] : mode === 'apiKey' ? [{ apiKey: [] }] : mode === 'idToken' ? [{ idToken: [] }] : [{ idToken: [] }, { apiKey: [] }];
    const operation: JsonObject = {
      summary: spec.summary,
      tags: [spec.tag],
      operationId: `${spec.method}_${openPath.replace(/[^A-Za-z0-9]+/g, '_')}`,
      security,
      parameters,
      responses: {
        [String(spec.successStatus ?? 200)]: {
          description: 'success',
          content: { 'application/json': { schema: spec.response ? jsonSchema(spec.response, 'output') : {} } },
        },
        '4XX': { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
    if (spec.body) operation.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } } };
    paths[openPath] = { ...(paths[openPath] ?? {}), [spec.method]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Media pipeline engine', version: '0.1.0', description: 'Live service, broker and authentication service. The playback, media, upload, health and metrics paths are described for reference; their requests are checked by their handlers, not by these schemas.' },
    servers: [{ url: publicUrl }],
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        idToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'the IdToken from POST /auth/authorize' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the engine sets one' },
      },
    },
    paths,
  };
}
