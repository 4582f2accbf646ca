// The body of POST and PUT /workflows with every rule of spec 4.2.4; regions are checked against the configuration.
import { isCidrBlock } from '../../kernel/core/cidr.js';
import { z } from 'zod';
import { blueprintSchema } from '../blueprints/blueprint.schema.js';

export const WORKFLOW_STATUSES = ['READY', 'PROVISIONING', 'STARTING', 'RUNNING', 'STOPPING', 'DELETING', 'DONE', 'START_FAILED', 'STOP_FAILED'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** Spec 3.1 lock rule: no update or delete while the channel changes state. */
export const LOCKED_STATUSES: readonly WorkflowStatus[] = ['PROVISIONING', 'STARTING', 'STOPPING', 'DELETING'];

export const WEEK_DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

// "Standard set of alphanumeric characters": letters, digits, space, - _ . (DESIGN.md).
const NAME_PATTERN = /^[A-Za-z0-9 _.-]{1,128}$/;
const nameText = z.string().regex(NAME_PATTERN, 'use 1 to 128 letters, digits, spaces, -, _ or .');

const dateTime = z.iso.datetime({ offset: true });

export const scheduleSchema = z
  .strictObject({
    startDateTime: dateTime,
    duration: z.number().int().min(5).max(720).optional(),
    stopDateTime: dateTime.optional(),
    startDateTimeShiftMinutes: z.number().int().min(0).max(1440).optional(),
    recurrence: z
      .strictObject({
        unit: z.enum(['DAY', 'WEEK']),
        days: z.array(z.enum(WEEK_DAYS)).min(1).max(7).optional(),
        endDate: z.iso.date().optional(),
      })
      .optional(),
  })
  .superRefine((schedule, issue) => {
    const start = Date.parse(schedule.startDateTime);
    if (schedule.stopDateTime !== undefined && Date.parse(schedule.stopDateTime) <= start) {
      issue.addIssue({ code: 'custom', path: ['stopDateTime'], message: 'must be after startDateTime' });
    }
    const recurrence = schedule.recurrence;
    if (recurrence?.unit === 'WEEK' && !recurrence.days) issue.addIssue({ code: 'custom', path: ['recurrence', 'days'], message: 'WEEK needs days (MON … SUN)' });
    if (recurrence?.unit === 'DAY' && recurrence.days) issue.addIssue({ code: 'custom', path: ['recurrence', 'days'], message: 'days go with unit WEEK only' });
    if (recurrence?.days && new Set(recurrence.days).size !== recurrence.days.length) issue.addIssue({ code: 'custom', path: ['recurrence', 'days'], message: 'a day is given twice' });
    if (recurrence?.endDate && recurrence.endDate < schedule.startDateTime.slice(0, 10)) {
      issue.addIssue({ code: 'custom', path: ['recurrence', 'endDate'], message: 'must not be before the date of startDateTime' });
    }
    // A recurring channel must stop before the next occurrence starts (24 h apart at least).
    if (recurrence && schedule.stopDateTime !== undefined && Date.parse(schedule.stopDateTime) - start > 24 * 3600_000) {
      issue.addIssue({ code: 'custom', path: ['stopDateTime'], message: 'a recurring schedule stops within 24 hours of its start' });
    }
  });

export type Schedule = z.output<typeof scheduleSchema>;

const subscriptionSchema = z.strictObject({
  owner: z.string().max(256).optional(),
  protocol: z.string().max(64).optional(),
  endpoint: z.string().max(2048).optional(),
  subscriptionArn: z.string().max(512).optional(),
  topicArn: z.string().max(512).optional(),
});

export function workflowBodySchema(regions: readonly string[]) {
  return z.strictObject({
    blueprint: blueprintSchema,
    name: nameText,
    // GET answers '' for no description; taking it back keeps PUT of what GET returned working (issue 20).
    description: z.union([z.literal(''), nameText]).optional(),
    region: z.string().refine((region) => regions.includes(region), `must be one of ${regions.join(', ')} (GET /regions)`).optional(),
    tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
    subscriptions: z.array(subscriptionSchema).max(20).optional(),
    inputWhitelistCIDRs: z.array(z.string().refine(isCidrBlock, 'must be a CIDR block such as 203.0.113.0/24')).max(50).optional(),
    schedule: scheduleSchema.optional(),
  });
}

export type WorkflowBody = z.output<ReturnType<typeof workflowBodySchema>>;

/** Comma lists of the query: tags AND (case-insensitive), statuses OR. */
export const workflowListQuery = z.object({
  tags: z.string().max(2048).optional(),
  status: z
    .string()
    .max(512)
    .optional()
    .refine((value) => !value || value.split(',').every((s) => (WORKFLOW_STATUSES as readonly string[]).includes(s.trim().toUpperCase())), `statuses are ${WORKFLOW_STATUSES.join(', ')}`),
  sort: z.enum(['asc', 'desc']).default('desc'),
});

export const workflowIdParams = z.object({ id: z.string().min(1).max(64) });
