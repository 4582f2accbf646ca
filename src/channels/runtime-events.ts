// Records what a channel runtime reports (alarms, metric samples, failures) into the control plane's tables. The live
// part does it where it runs beside the runtime; a packager process without the api role does it itself (the events
// are raised where the channel runs, and only the database is shared).
import type { ChannelRuntimeEvent } from '../../kernel/seams/channel-runtime.js';
import type { WorkflowStore } from '../workflows/workflow.store.js';
import { recordAlarm, recordMetric } from './channel-telemetry.store.js';

export async function recordRuntimeEvent(workflows: WorkflowStore, event: ChannelRuntimeEvent): Promise<void> {
  const db = workflows.db;
  if (event.type === 'metric') return recordMetric(db, event);
  if (event.type === 'alarm') return recordAlarm(db, event);
  // A channel that fails while running keeps its status (spec 3.1 has no such transition); the alarm and reason tell.
  await recordAlarm(db, { workflowId: event.workflowId, code: 'CHANNEL_FAILED', message: event.reason, severity: 'CRITICAL', active: true, at: event.at });
  const workflow = await workflows.getAnyOrganization(event.workflowId);
  if (workflow) await workflows.patch(workflow.organizationId, workflow.id, ['RUNNING'], { status_reason: event.reason });
}
