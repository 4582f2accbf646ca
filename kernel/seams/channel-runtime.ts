// The contract between the live control plane (src/channels) and whatever runs channels (the packager).
// The control plane owns statuses and storage; a runtime only starts, stops and reports. No engine imports here.

/** Everything a runtime needs to start one channel of a workflow. */
export interface ChannelSpec {
  workflowId: string;
  organizationId: string;
  region: string;
  /** the embedded blueprint of the workflow after the archive rules of spec 3.3 were applied */
  blueprint: {
    components: Record<string, { input: Record<string, unknown> & { name: string }; channel?: Record<string, unknown> }>;
    settings?: Record<string, unknown>;
  } & Record<string, unknown>;
  /** input allow-list of the workflow (PUSH protocols) */
  inputWhitelistCIDRs: string[];
  /** spec 3.3: an archive is written when true; `defaultArchiveGroup` when the blueprint had none */
  archive: { enabled: boolean; defaultArchiveGroup: boolean };
  /** name of the input that is active at start (the first one) */
  activeInput: string;
}

/** An ingest endpoint of a started channel (what an encoder or camera pushes to, or what is pulled). */
export interface ChannelInputEndpoint {
  name: string;
  type: string;
  url: string;
  managedInputId?: string;
  streamKey?: string;
}

/** A playback URL of one destination of the channel. */
export interface ChannelOutput {
  destinationId: string;
  /** HLS, RTMP, … */
  type: string;
  url: string;
}

export interface ChannelEndpoints {
  inputs: ChannelInputEndpoint[];
  outputs: ChannelOutput[];
}

/** An ad break (SCTE-35 splice insert) to put into the outputs of a running channel. */
export interface AdBreak {
  spliceEventId: number;
  /** epoch ms */
  startsAt: number;
  /** epoch ms of the request: with it the runtime keeps the break 15–20 s after it on a segment boundary (spec 8) */
  requestedAt?: number;
  /** seconds */
  duration: number;
}

/** The eight metrics of spec 4.2.12 graphs. */
export const CHANNEL_METRICS = [
  'NETWORK_IN', 'NETWORK_OUT', 'DROPPED_FRAMES', 'ACTIVE_ALERTS', 'INPUT_VIDEO_FRAME_RATE', 'FILL_MS', 'UDP_INPUT_LOSS', 'SVQ_TIME',
] as const;
export type ChannelMetric = (typeof CHANNEL_METRICS)[number];

/** What a runtime reports about channels it runs, unprompted. */
export type ChannelRuntimeEvent =
  /** the channel failed while running (input lost for good, process died): the control plane records it */
  | { type: 'failed'; workflowId: string; reason: string; at: number }
  | {
    type: 'alarm'; workflowId: string; code: string; message: string; severity: 'WARNING' | 'CRITICAL'; active: boolean; at: number;
    /** on a clear: what the alarm's record says from now on (an outage's length, known only once it is over) */
    finalMessage?: string;
  }
  | { type: 'metric'; workflowId: string; metric: ChannelMetric; value: number; at: number };

/** A start sent before this process restarted that another process still runs (or has answered meanwhile). */
export interface HeldStart {
  /** Waits for its answer, as start() would have: the endpoints, or a rejection with the cause. */
  result(): Promise<ChannelEndpoints>;
}

export interface ChannelRuntime {
  /** Creates inputs and outputs and starts encoding; resolves when the channel runs, rejects with the cause otherwise. */
  start(spec: ChannelSpec): Promise<ChannelEndpoints>;
  /**
   * After a restart of this process: the start of `workflowId` that a live process still holds, or undefined when
   * none does. Only a runtime whose starts run elsewhere has it: an in-process start died with the process.
   */
  heldStart?(workflowId: string): Promise<HeldStart | undefined>;
  /** Stops and removes what start created (also after a failed start: the rollback); idempotent. */
  stop(workflowId: string): Promise<{ archiveUrl?: string }>;
  /** Schedules a break; may answer the start it really got (the segment boundary it was placed on). */
  insertAdBreak(workflowId: string, adBreak: AdBreak): Promise<void | { startsAt: number }>;
  /** Switches a running channel to another of its inputs, by input name. */
  switchInput(workflowId: string, input: string): Promise<void>;
  /** Subscribes to runtime events; returns the unsubscribe function. */
  subscribe?(listener: (event: ChannelRuntimeEvent) => void): () => void;
}
