// Builders of the events of notification.schema.ts, so each hook where a change is written stays one line:
// `await notify(tx, workflowStatusEvent(...))`. The payloads here are the ones docs/notifications.md documents.
import type { NotificationEvent } from './notification.schema.js';

const iso = (ms: number): string => new Date(ms).toISOString();

export function workflowStatusEvent(w: { organizationId: string; workflowId: string; name: string; status: string; reason: string | null; at: number }): NotificationEvent {
  return {
    type: 'workflow.status',
    organizationId: w.organizationId,
    workflowId: w.workflowId,
    at: w.at,
    subject: `Workflow ${w.name} is ${w.status}${w.reason ? `: ${w.reason}` : ''}`.slice(0, 300),
    data: { workflowId: w.workflowId, name: w.name, status: w.status, statusReason: w.reason, dateTime: iso(w.at) },
  };
}

export function archiveReadyEvent(a: { organizationId: string; workflowId: string; name: string; archiveUrl: string; at: number }): NotificationEvent {
  return {
    type: 'channel.archive.ready',
    organizationId: a.organizationId,
    workflowId: a.workflowId,
    at: a.at,
    subject: `The archive of workflow ${a.name} is ready`,
    data: { workflowId: a.workflowId, name: a.name, archive: { status: 'AVAILABLE', url: a.archiveUrl }, dateTime: iso(a.at) },
  };
}

export function alarmEvent(a: {
  organizationId: string; workflowId: string; alarmId: string; code: string; message: string; severity: string; raisedAt: number; clearedAt: number | null;
}): NotificationEvent {
  const cleared = a.clearedAt !== null;
  return {
    type: cleared ? 'channel.alarm.cleared' : 'channel.alarm.raised',
    organizationId: a.organizationId,
    workflowId: a.workflowId,
    at: a.clearedAt ?? a.raisedAt,
    subject: `Alarm ${a.code} ${cleared ? 'cleared' : 'raised'} on workflow ${a.workflowId}`,
    data: {
      workflowId: a.workflowId,
      alarm: {
        id: a.alarmId, code: a.code, message: a.message, severity: a.severity, active: !cleared,
        raisedDateTime: iso(a.raisedAt), ...(a.clearedAt !== null ? { clearedDateTime: iso(a.clearedAt) } : {}),
      },
    },
  };
}

export function vodEncodeEvent(v: { organizationId: string; guid: string; title: string | null; ok: boolean; reason: string | null; hlsUrl: string | null; at: number }): NotificationEvent {
  return {
    type: v.ok ? 'vod.encode.complete' : 'vod.encode.failed',
    organizationId: v.organizationId,
    at: v.at,
    subject: `VOD ${v.title ?? v.guid} ${v.ok ? 'is encoded' : `failed to encode${v.reason ? `: ${v.reason}` : ''}`}`.slice(0, 300),
    data: { guid: v.guid, title: v.title, status: v.ok ? 'complete' : 'error', statusReason: v.reason, hls: v.hlsUrl, dateTime: iso(v.at) },
  };
}

export function captionsEvent(c: {
  organizationId: string; guid: string; title: string | null; ok: boolean; reason: string | null; language: string | null; vttUrl: string | null; cues: number | null; at: number;
}): NotificationEvent {
  return {
    type: c.ok ? 'vod.captions.complete' : 'vod.captions.failed',
    organizationId: c.organizationId,
    at: c.at,
    subject: `Captions of VOD ${c.title ?? c.guid} ${c.ok ? 'are ready' : 'failed'}`,
    data: { guid: c.guid, title: c.title, captions: { status: c.ok ? 'complete' : 'error', reason: c.reason, language: c.language, vttUrl: c.vttUrl, cues: c.cues }, dateTime: iso(c.at) },
  };
}
