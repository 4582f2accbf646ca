// Ad breaks, alarms and metric samples of channels (spec 4.2.11, 4.2.12); the runtime fills alarms and
// metrics through recordAlarm / recordMetric (wired from its events in channel.service.ts).
import type { Db, Tx } from '../../kernel/store/database.js';
import { notify } from '../notifications/outbox.js';
import { alarmEvent } from '../notifications/events.js';
import { newId } from '../../kernel/core/ids.js';
import type { ChannelMetric } from '../../kernel/seams/channel-runtime.js';

export interface ChannelAdBreakTable {
  id: string;
  organization_id: string;
  workflow_id: string;
  splice_event_id: number;
  starts_at: number;
  duration: number;
  created_at: number;
}

export interface ChannelAlarmTable {
  id: string;
  workflow_id: string;
  code: string;
  message: string;
  severity: string;
  raised_at: number;
  cleared_at: number | null;
}

export interface ChannelMetricTable {
  id: string;
  workflow_id: string;
  metric: string;
  at: number;
  value: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    channel_ad_breaks: ChannelAdBreakTable;
    channel_alarms: ChannelAlarmTable;
    channel_metrics: ChannelMetricTable;
  }
}

export interface ChannelAlarm {
  id: string;
  code: string;
  message: string;
  severity: string;
  active: boolean;
  raisedDateTime: string;
  clearedDateTime?: string;
}

export async function recordAdBreak(db: Db, value: { organizationId: string; workflowId: string; spliceEventId: number; startsAt: number; duration: number; now: number }): Promise<void> {
  await db
    .insertInto('channel_ad_breaks')
    .values({ id: newId(), organization_id: value.organizationId, workflow_id: value.workflowId, splice_event_id: value.spliceEventId, starts_at: value.startsAt, duration: value.duration, created_at: value.now })
    .execute();
}

/** Raises an alarm (one active alarm per code and channel) or clears the active one of that code; notifies either. */
export async function recordAlarm(db: Db, value: { workflowId: string; code: string; message: string; severity: string; active: boolean; at: number; finalMessage?: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const open = await trx
      .selectFrom('channel_alarms')
      .selectAll()
      .where('workflow_id', '=', value.workflowId)
      .where('code', '=', value.code)
      .where('cleared_at', 'is', null)
      .executeTakeFirst();
    if (value.active && !open) {
      const alarm = { id: newId(), workflow_id: value.workflowId, code: value.code, message: value.message, severity: value.severity, raised_at: value.at, cleared_at: null };
      await trx.insertInto('channel_alarms').values(alarm).execute();
      await notifyAlarm(trx, alarm);
    } else if (!value.active && open) {
      const message = value.finalMessage ?? open.message;
      await trx.updateTable('channel_alarms').set({ cleared_at: value.at, message }).where('id', '=', open.id).execute();
      await notifyAlarm(trx, { ...open, message, cleared_at: value.at });
    }
  });
}

/** Clears every active alarm of a channel (it stopped: nothing is left to alarm about). */
export async function clearAlarms(db: Db, workflowId: string, at: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const open = await trx.selectFrom('channel_alarms').selectAll().where('workflow_id', '=', workflowId).where('cleared_at', 'is', null).execute();
    await trx.updateTable('channel_alarms').set({ cleared_at: at }).where('workflow_id', '=', workflowId).where('cleared_at', 'is', null).execute();
    for (const alarm of open) await notifyAlarm(trx, { ...alarm, cleared_at: at });
  });
}

async function notifyAlarm(trx: Tx, alarm: ChannelAlarmTable): Promise<void> {
  const owner = await trx.selectFrom('workflows').select('organization_id').where('id', '=', alarm.workflow_id).executeTakeFirst();
  if (!owner) return;
  await notify(trx, alarmEvent({
    organizationId: owner.organization_id, workflowId: alarm.workflow_id, alarmId: alarm.id, code: alarm.code, message: alarm.message,
    severity: alarm.severity, raisedAt: Number(alarm.raised_at), clearedAt: alarm.cleared_at === null ? null : Number(alarm.cleared_at),
  }));
}

export async function listAlarms(db: Db, workflowId: string, history: boolean): Promise<ChannelAlarm[]> {
  let query = db.selectFrom('channel_alarms').selectAll().where('workflow_id', '=', workflowId);
  if (!history) query = query.where('cleared_at', 'is', null);
  const rows = await query.orderBy('raised_at', 'desc').execute();
  return rows.map((row) => ({
    id: row.id,
    code: row.code,
    message: row.message,
    severity: row.severity,
    active: row.cleared_at === null,
    raisedDateTime: new Date(Number(row.raised_at)).toISOString(),
    ...(row.cleared_at !== null ? { clearedDateTime: new Date(Number(row.cleared_at)).toISOString() } : {}),
  }));
}

export async function recordMetric(db: Db, value: { workflowId: string; metric: ChannelMetric; value: number; at: number }): Promise<void> {
  await db.insertInto('channel_metrics').values({ id: newId(), workflow_id: value.workflowId, metric: value.metric, at: value.at, value: value.value }).execute();
}

export async function listMetric(db: Db, workflowId: string, metric: ChannelMetric, fromMs: number, toMs: number): Promise<Array<{ timestamp: string; value: number }>> {
  const rows = await db
    .selectFrom('channel_metrics')
    .select(['at', 'value'])
    .where('workflow_id', '=', workflowId)
    .where('metric', '=', metric)
    .where('at', '>=', fromMs)
    .where('at', '<', toMs)
    .orderBy('at')
    .limit(10_000)
    .execute();
  return rows.map((row) => ({ timestamp: new Date(Number(row.at)).toISOString(), value: Number(row.value) }));
}
