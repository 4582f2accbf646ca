// The console's API types are generated from the engine's /openapi.json (scripts/console-types.ts): the committed
// console/src/api-types.ts must be what the generator writes now, so a response schema changed in src/ shows here.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { engineOpenApi, OUTPUT, renderConsoleTypes } from '../../../scripts/console-types.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('console API types', () => {
  it('are generated from the current /openapi.json (npm run gen:console-types)', async () => {
    const generated = renderConsoleTypes(await engineOpenApi());
    expect(generated).toContain('export interface WorkflowItem {');
    expect(fs.readFileSync(path.join(root, OUTPUT), 'utf8'), 'console/src/api-types.ts is stale: run npm run gen:console-types').toBe(generated);
  });

  it('are refused for an operation that documents no answer, rather than typed unknown', () => {
    const document = { paths: { '/regions': { get: { responses: { 200: { content: { 'application/json': { schema: {} } } } } } } } };
    expect(() => renderConsoleTypes(document)).toThrow('GET /regions documents no answer schema');
  });
});
