// The catalog of tested blueprints: fixtures/blueprints/*.json, read once at start and checked against the 2.1 shape.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { blueprintSchema, type CatalogBlueprint } from './blueprint.schema.js';

export const DEFAULT_CATALOG_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/blueprints');

const catalogEntrySchema = z.object({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  name: z.string().min(1),
  description: z.string(),
  featured: z.boolean(),
  tags: z.array(z.string()),
  created: z.number().int(),
  deprecated: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  settings: z.object({ adServers: z.array(z.unknown()) }),
  createArchives: z.boolean(),
  createRawArchive: z.boolean(),
});

export class BlueprintCatalog {
  private constructor(private readonly byId: ReadonlyMap<string, CatalogBlueprint>) {}

  /** Throws naming the file when one catalog entry is malformed: a broken catalog must stop the start. */
  static load(dir: string = DEFAULT_CATALOG_DIR): BlueprintCatalog {
    const entries = new Map<string, CatalogBlueprint>();
    for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.json')).sort()) {
      const raw: unknown = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      const shape = blueprintSchema.safeParse(raw);
      const entry = catalogEntrySchema.safeParse(raw);
      if (!shape.success || !entry.success) {
        const issues = [...(shape.error?.issues ?? []), ...(entry.error?.issues ?? [])];
        throw new Error(`blueprint ${file}: ${issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      }
      if (entries.has(entry.data.id)) throw new Error(`blueprint ${file}: duplicate id ${entry.data.id}`);
      entries.set(entry.data.id, raw as CatalogBlueprint);
    }
    return new BlueprintCatalog(entries);
  }

  list(): CatalogBlueprint[] {
    return [...this.byId.values()];
  }

  get(id: string): CatalogBlueprint | undefined {
    return this.byId.get(id);
  }
}
