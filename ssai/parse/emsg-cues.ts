// SCTE-35 cues carried inband (SCTE 214-1 §6.3, scheme urn:scte:scte35:2013:bin): an emsg box whose message_data is a
// binary splice_info_section, read as a cue on the Period's timeline as an EventStream's would be (mpd-cues.ts). Pure.
import { EMSG_DURATION_UNKNOWN, type EmsgBox } from './emsg.js';
import { MAX_BREAK_SECONDS, sectionCue, type MpdCue, type MpdCueWarning } from './mpd-cues.js';

export const SCTE35_INBAND_SCHEME = 'urn:scte:scte35:2013:bin';

/** A media segment the boxes came from: its earliest presentation time in seconds of the Period. */
export type EmsgSegment = { startSec: number };

/**
 * The SCTE-35 cues of a segment's emsg boxes. Where an event sits: version 0 counts presentation_time_delta from the
 * segment's earliest presentation time; version 1 gives presentation_time on the track's media timeline, made a time of
 * the Period by the Representation's presentationTimeOffset (`ptoSec`; less its Period's start, a time of the MPD's
 * timeline, as dash-inband.ts reads every Period's). The event_duration stands in for a section
 * without a break or segmentation duration, as an EventStream Event's @duration does.
 */
export function emsgCues(boxes: readonly EmsgBox[], segment: EmsgSegment, ptoSec: number): { cues: MpdCue[]; warnings: MpdCueWarning[] } {
  const cues: MpdCue[] = [];
  const warnings: MpdCueWarning[] = [];
  for (const box of boxes) {
    if (box.schemeIdUri !== SCTE35_INBAND_SCHEME) continue;
    if (!(box.timescale > 0)) { warnings.push({ message: 'an SCTE-35 emsg box has timescale 0', reason: 'bad_date' }); continue; }
    const cue = sectionCue(box.messageData);
    if (cue === undefined) continue;
    if (typeof cue === 'string') { warnings.push({ message: cue, reason: 'bad_scte35' }); continue; }
    const atSec = box.version === 0
      ? segment.startSec + (box.presentationTimeDelta ?? 0) / box.timescale
      : (box.presentationTime ?? 0) / box.timescale - ptoSec;
    if (!Number.isFinite(atSec) || atSec < 0) { warnings.push({ message: `emsg ${box.id}'s presentation time is before the Period`, reason: 'bad_date' }); continue; }
    if (cue.durationSec === undefined && box.eventDuration > 0 && box.eventDuration !== EMSG_DURATION_UNKNOWN) cue.durationSec = box.eventDuration / box.timescale;
    if (cue.durationSec !== undefined && !(cue.durationSec <= MAX_BREAK_SECONDS)) { warnings.push({ message: `break duration ${cue.durationSec} s`, reason: 'bad_duration' }); continue; }
    if (!cue.id) cue.id = `emsg-${box.id}`;
    cues.push({ ...cue, atSec: Math.round(atSec * 1000) / 1000, scheme: SCTE35_INBAND_SCHEME });
  }
  return { cues, warnings };
}
