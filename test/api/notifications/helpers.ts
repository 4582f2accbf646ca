// A confirmed subscription for event tests: subscribe, take the SubscribeURL from the receiver, open it.
import { sql } from 'kysely';
import pg from 'pg';
import { expect } from 'vitest';
import { POSTGRES_URL, type TestEngine } from '../../helpers/engine.js';
import type { WebhookReceiver } from './receivers.js';

export async function confirmedWebhook(engine: TestEngine, auth: Record<string, string>, receiver: WebhookReceiver, endpoint = receiver.url): Promise<string> {
  const created = await engine.api('POST', `/organizations/${engine.defaultOrganizationId}/notification-subscriptions`, { headers: auth, body: { endpoint, type: 'https' } });
  expect(created.status).toBe(201);
  const id = created.body.guid as string;
  const confirmation = await receiver.waitFor('the confirmation', (r) => r.json.Type === 'SubscriptionConfirmation' && r.json.SubscriptionId === id);
  expect((await fetch(confirmation.json.SubscribeURL as string)).status).toBe(200);
  return id;
}

/** Closes the engines and drops their PostgreSQL schema (the shared server stays clean). */
export async function closeAndDropSchema(...engines: Array<TestEngine | undefined>): Promise<void> {
  const [first] = engines;
  let schema: string | undefined;
  if (first?.ctx.store.dialect === 'postgres') {
    schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(first.ctx.store.db)).rows[0]?.schema;
  }
  for (const engine of engines) await engine?.close();
  if (!schema || !/^t_[a-f0-9]+$/.test(schema)) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query(`DROP SCHEMA IF EXISTS ${schema}_boss CASCADE`);
  } finally {
    await client.end();
  }
}
