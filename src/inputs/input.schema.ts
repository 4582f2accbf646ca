// Managed inputs (spec 2.4, 3.4, 8): request schemas and the rules that need the configured regions.
import { isCidrBlock } from '../../kernel/core/cidr.js';
import { z } from 'zod';
import { engineError, type FieldProblem } from '../../kernel/core/errors.js';
import { fixedFieldsShape } from '../http/unchanged-fields.js';

export const INPUT_TYPES = ['VIRTUAL_INPUT', 'CONNECTED_DEVICE'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/** `SRT_PUSH` stands for the spec's `<VENDOR>_PUSH` (DESIGN.md). */
export const PROTOCOLS = ['SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC', 'RTMP_PUSH', 'RTMP_PULL', 'URL_PULL', 'MP4'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** PUSH protocols accept CIDR blocks restricting who may push (spec 2.4). */
export const PUSH_PROTOCOLS: readonly Protocol[] = ['SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC', 'RTMP_PUSH'];
/** PULL protocols (and the MP4 file input) fetch from a URL, optionally with a username and password. */
export const PULL_PROTOCOLS: readonly Protocol[] = ['RTMP_PULL', 'URL_PULL', 'MP4'];
/** Spec 8: in a non-default region these protocols take one CIDR block only. */
export const ONE_CIDR_OUTSIDE_DEFAULT_REGION: readonly Protocol[] = ['SRT_PUSH', 'RIST', 'RTP_FEC', 'RTP'];
/** At most this many CIDR blocks in the default region (the size of one security group). */
export const MAX_CIDRS = 10;
/** A push input without CIDRs is open to everyone; the answer says so explicitly. */
export const OPEN_CIDRS = ['0.0.0.0/0'];

const name = z.string().trim().min(1).max(128).regex(/^[A-Za-z0-9 ._-]+$/, 'letters, digits, space, ".", "_" and "-"');
const cidr = z.string().trim().refine(isCidrBlock, 'a CIDR block such as 203.0.113.0/24');
const sourceUrl = z.url({ protocol: /^(rtmps?|https?|srt|rist|rtp|udp)$/ });
const credential = z.string().min(1).max(256);
/** Settings of a connected device: a flat-ish JSON object the device understands. */
export const deviceSettings = z.record(z.string().min(1).max(128), z.unknown());

export const createInputBody = z.object({
  name,
  type: z.enum(INPUT_TYPES),
  protocol: z.enum(PROTOCOLS).optional(),
  deviceId: z.string().min(1).max(64).optional(),
  region: z.string().trim().min(1).optional(),
  cidrs: z.array(cidr).optional(),
  url: sourceUrl.optional(),
  username: credential.optional(),
  password: credential.optional(),
});
export type CreateInputBody = z.output<typeof createInputBody>;

const FIXED_AT_CREATION = 'it fixes the ingest address allocated at creation; create a new input instead';
/**
 * Type, protocol, device and region fix the ingest address allocated at creation, so they cannot change; with the
 * read-only fields of GET they may be sent unchanged (PUT what GET returned), and a change answers 400 naming it.
 */
export const INPUT_FIXED_FIELDS = {
  type: FIXED_AT_CREATION, protocol: FIXED_AT_CREATION, deviceId: FIXED_AT_CREATION, region: FIXED_AT_CREATION,
  id: 'it is the id of the input', ingest: 'the ingest address is allocated at creation', created: 'it is the creation time',
  source: 'it is the read form of url, username and password: send those to change the source',
} as const;
/** State the engine keeps moving (status from the workflows, the device's heartbeat): ignored in a PUT. */
export const INPUT_VOLATILE_FIELDS = ['status', 'updated', 'workflows', 'device'] as const;

export const updateInputBody = z
  .strictObject({
    ...fixedFieldsShape(INPUT_FIXED_FIELDS, INPUT_VOLATILE_FIELDS),
    name: name.optional(),
    cidrs: z.array(cidr).optional(),
    url: sourceUrl.optional(),
    username: credential.nullable().optional(),
    password: credential.nullable().optional(),
    /** CONNECTED_DEVICE only: settings to push to the device (it reports them back through its heartbeat) */
    deviceSettings: deviceSettings.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'give at least one field to change');
export type UpdateInputBody = z.output<typeof updateInputBody>;

/** The fields whose rules depend on each other, after a create or an update is applied. */
export interface InputShape {
  type: InputType;
  protocol: Protocol | undefined;
  deviceId: string | undefined;
  region: string;
  cidrs: readonly string[] | undefined;
  url: string | undefined;
  username: string | undefined;
  password: string | undefined;
}

/** Every rule between fields of spec 2.4 and 8; returns every problem (400 lists them all). */
export function inputProblems(input: InputShape, regions: { all: readonly string[]; default: string }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const add = (field: string, message: string) => problems.push({ field, message });
  if (!regions.all.includes(input.region)) add('region', `unknown region; one of ${regions.all.join(', ')}`);
  if (input.type === 'CONNECTED_DEVICE') {
    if (!input.deviceId) add('deviceId', 'is required for a CONNECTED_DEVICE input');
    if (input.protocol) add('protocol', 'a CONNECTED_DEVICE input has no protocol');
    if (input.cidrs) add('cidrs', 'a CONNECTED_DEVICE input takes no CIDR blocks');
    if (input.url || input.username || input.password) add('url', 'a CONNECTED_DEVICE input pulls from no URL');
    return problems;
  }
  if (input.deviceId) add('deviceId', 'only a CONNECTED_DEVICE input names a device');
  const protocol = input.protocol;
  if (!protocol) {
    add('protocol', 'is required for a VIRTUAL_INPUT');
    return problems;
  }
  if (PUSH_PROTOCOLS.includes(protocol)) {
    if (input.url || input.username || input.password) add('url', `${protocol} is a PUSH protocol: it takes cidrs, not a url or credentials`);
    const cidrs = input.cidrs ?? [];
    if (cidrs.length > MAX_CIDRS) add('cidrs', `at most ${MAX_CIDRS} CIDR blocks`);
    if (cidrs.length > 1 && input.region !== regions.default && ONE_CIDR_OUTSIDE_DEFAULT_REGION.includes(protocol)) {
      add('cidrs', `${protocol} takes one CIDR block only in a non-default region (${input.region})`);
    }
  } else {
    if (input.cidrs) add('cidrs', `${protocol} pulls its source: CIDR blocks apply to PUSH protocols only`);
    if (!input.url) add('url', `is required for ${protocol}`);
    else {
      const scheme = new URL(input.url).protocol;
      const allowed = protocol === 'RTMP_PULL' ? ['rtmp:', 'rtmps:'] : ['http:', 'https:'];
      if (!allowed.includes(scheme)) add('url', `${protocol} needs a ${allowed.join(' or ')} URL`);
    }
    if (input.password && !input.username) add('username', 'is required with a password');
    if (input.username && !input.password) add('password', 'is required with a username');
  }
  return problems;
}

export function assertInput(input: InputShape, regions: { all: readonly string[]; default: string }): void {
  const problems = inputProblems(input, regions);
  if (problems.length > 0) {
    throw engineError('VALIDATION_FAILED', `invalid body: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
  }
}
