// The control plane's side of kernel/seams/channel-records.ts: the packager's recovery and takeover read workflows
// and channel owners through it, never by SQL of their own on these tables.
import { sql } from 'kysely';
import type { Db } from '../../kernel/store/database.js';
import type { ChannelRecords } from '../../kernel/seams/channel-records.js';
import { livePackagers } from './channel-command.store.js';

export function channelRecords(db: Db): ChannelRecords {
  return {
    async runningWorkflowIds() {
      const running = await sql<{ id: string }>`select id from workflows where status = 'RUNNING'`.execute(db);
      return running.rows.map((row) => row.id);
    },
    async workflowName(workflowId) {
      const workflow = await db.selectFrom('workflows').select('name').where('id', '=', workflowId).executeTakeFirst();
      return workflow?.name;
    },
    async ownedByBeatingPackagers(workflowIds, beatSince) {
      const rows = await db
        .selectFrom('channel_owners')
        .innerJoin('packager_processes', 'packager_processes.id', 'channel_owners.packager_id')
        .select('channel_owners.workflow_id')
        .where('channel_owners.workflow_id', 'in', workflowIds)
        .where('packager_processes.beat_at', '>=', beatSince)
        .execute();
      return rows.map((row) => row.workflow_id);
    },
    livePackagers: (now) => livePackagers(db, now),
    async pruneMetrics(before) {
      await sql`delete from channel_metrics where at < ${before}`.execute(db);
    },
  };
}
