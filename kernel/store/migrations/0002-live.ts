import type { Kysely } from 'kysely';

// Live control plane (spec 2.2, 2.3, 3.1, 4.2): workflows with their one channel, ad breaks, alarms,
// metric samples and the cluster-wide scheduler lock. Portable columns: text ids, JSON text, epoch ms bigint.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('blueprint_id', 'text')
    .addColumn('blueprint', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('region_given', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('subscriptions', 'text', (c) => c.notNull())
    .addColumn('input_whitelist_cidrs', 'text', (c) => c.notNull())
    .addColumn('schedule', 'text')
    .addColumn('source_workflow_id', 'text')
    // channel of the workflow (one start per workflow, spec 8)
    .addColumn('channel_region', 'text')
    .addColumn('start_requested_at', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('stop_requested_at', 'bigint')
    .addColumn('stopped_at', 'bigint')
    .addColumn('channel_inputs', 'text')
    .addColumn('channel_outputs', 'text')
    .addColumn('active_input', 'text')
    .addColumn('archive_status', 'text')
    .addColumn('archive_url', 'text')
    // scheduler bookkeeping: last occurrence handled, and the channel it started that still has to stop
    .addColumn('schedule_handled_at', 'bigint')
    .addColumn('schedule_stop_at', 'bigint')
    .addColumn('schedule_channel_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workflows_org_created').on('workflows').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('channel_ad_breaks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('splice_event_id', 'bigint', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('duration', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('channel_ad_breaks_wf').on('channel_ad_breaks').column('workflow_id').execute();

  await db.schema
    .createTable('channel_alarms')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('raised_at', 'bigint', (c) => c.notNull())
    .addColumn('cleared_at', 'bigint')
    .execute();
  await db.schema.createIndex('channel_alarms_wf').on('channel_alarms').column('workflow_id').execute();

  await db.schema
    .createTable('channel_metrics')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('value', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('channel_metrics_wf_metric_at').on('channel_metrics').columns(['workflow_id', 'metric', 'at']).execute();

  await db.schema
    .createTable('scheduler_locks')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}
