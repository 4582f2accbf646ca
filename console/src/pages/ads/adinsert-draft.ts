// An ad-insertion configuration as the edit form holds it (text for every input), and the PUT body of an edit: the
// fields spec 4.6 requires plus only those the operator changed, an emptied optional field sent as null (issue 31).
import type { FieldProblem } from '../../api';
import type { Adinsert } from '../../types';

export const INSERTION_MODES = ['stitched', 'guided'] as const;
export const SUPPRESSION_MODES = ['OFF', 'BEHIND_LIVE_EDGE', 'AFTER_LIVE_EDGE'] as const;
export const FILL_POLICIES = ['FULL_AVAIL_ONLY', 'PARTIAL_AVAIL'] as const;

export interface Draft {
  name: string;
  type: Adinsert['type'];
  source_url: string;
  ad_server: string;
  slate_ad: string;
  ad_server_max_rps: string;
  insertion_mode: Adinsert['insertionMode'];
  insertion_mode_override: boolean;
  personalization_threshold_seconds: string;
  /** '': no avail suppression */
  suppression_mode: '' | (typeof SUPPRESSION_MODES)[number];
  suppression_value: string;
  suppression_fill_policy: (typeof FILL_POLICIES)[number];
  bumper_start_url: string;
  bumper_end_url: string;
  live_preroll_ad_server: string;
  live_preroll_max_seconds: string;
  ad_marker_passthrough: boolean;
  content_segment_prefix: string;
  ad_segment_prefix: string;
}

const text = (value: string | number | undefined): string => (value === undefined ? '' : String(value));

export function draftOf(a: Adinsert): Draft {
  return {
    name: a.name, type: a.type, source_url: a.sourceUrl, ad_server: a.adServer, slate_ad: text(a.slateAd),
    ad_server_max_rps: text(a.adServerMaxRps), insertion_mode: a.insertionMode, insertion_mode_override: a.insertionModeOverride,
    personalization_threshold_seconds: text(a.personalizationThresholdSeconds),
    suppression_mode: a.availSuppression?.mode ?? '', suppression_value: a.availSuppression?.value ?? '00:00:00',
    suppression_fill_policy: a.availSuppression?.fillPolicy ?? 'FULL_AVAIL_ONLY',
    bumper_start_url: text(a.bumperStartUrl), bumper_end_url: text(a.bumperEndUrl),
    live_preroll_ad_server: text(a.livePrerollAdServer), live_preroll_max_seconds: text(a.livePrerollMaxSeconds),
    ad_marker_passthrough: a.adMarkerPassthrough,
    content_segment_prefix: text(a.contentSegmentPrefix), ad_segment_prefix: text(a.adSegmentPrefix),
  };
}

/** Text fields sent as they are (trimmed); emptied: null, the field removed. */
const OPTIONAL_TEXT = ['slate_ad', 'bumper_start_url', 'bumper_end_url', 'live_preroll_ad_server', 'content_segment_prefix', 'ad_segment_prefix'] as const;
const OPTIONAL_NUMBERS = ['ad_server_max_rps', 'personalization_threshold_seconds', 'live_preroll_max_seconds'] as const;
const SUPPRESSION = ['suppression_mode', 'suppression_value', 'suppression_fill_policy'] as const;

/**
 * A number input's text as sent: a number, or the text itself when it is none, so that the API's validation names
 * the field (the console does not judge values the API checks).
 */
function numberOf(value: string): number | string {
  const n = Number(value);
  return value.trim() !== '' && Number.isFinite(n) ? n : value;
}

export function changedFields(before: Draft, after: Draft): Array<keyof Draft> {
  return (Object.keys(after) as Array<keyof Draft>).filter((k) => before[k] !== after[k]);
}

/** PUT /broker/adinserts/{guid}: name, ad_server and type always; the rest only when changed. */
export function updateBody(before: Draft, after: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = { name: after.name, ad_server: after.ad_server, type: after.type };
  const changed = new Set(changedFields(before, after));
  if (changed.has('source_url')) body.source_url = after.source_url.trim();
  for (const k of OPTIONAL_TEXT) if (changed.has(k)) body[k] = after[k].trim() || null;
  for (const k of OPTIONAL_NUMBERS) if (changed.has(k)) body[k] = after[k].trim() ? numberOf(after[k]) : null;
  for (const k of ['insertion_mode', 'insertion_mode_override', 'ad_marker_passthrough'] as const) if (changed.has(k)) body[k] = after[k];
  if (SUPPRESSION.some((k) => changed.has(k))) {
    body.avail_suppression = after.suppression_mode === '' ? null : {
      mode: after.suppression_mode, fill_policy: after.suppression_fill_policy,
      ...(after.suppression_value.trim() ? { value: after.suppression_value.trim() } : {}),
    };
  }
  return body;
}

/** Every input of the draft, to tell the API's field names that are one from those that are not. */
const DRAFT_KEYS: Record<keyof Draft, true> = {
  name: true, type: true, source_url: true, ad_server: true, slate_ad: true, ad_server_max_rps: true, insertion_mode: true,
  insertion_mode_override: true, personalization_threshold_seconds: true, suppression_mode: true, suppression_value: true,
  suppression_fill_policy: true, bumper_start_url: true, bumper_end_url: true, live_preroll_ad_server: true,
  live_preroll_max_seconds: true, ad_marker_passthrough: true, content_segment_prefix: true, ad_segment_prefix: true,
};
const isDraftKey = (key: string): key is keyof Draft => Object.hasOwn(DRAFT_KEYS, key);

/** The API's field problems by the form input that holds the field (`avail_suppression.value`: suppression_value). */
export function problemsByInput(problems: FieldProblem[]): Partial<Record<keyof Draft, string>> {
  const out: Partial<Record<keyof Draft, string>> = {};
  for (const p of problems) {
    const [head = '', sub] = p.field.split('.');
    const key = head === 'avail_suppression' ? `suppression_${sub === 'value' || sub === 'fill_policy' ? sub : 'mode'}` : head;
    if (isDraftKey(key)) out[key] = out[key] ? `${out[key]}; ${p.message}` : p.message;
  }
  return out;
}
