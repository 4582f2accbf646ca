// The shapes the console reads from the engine's API. Those the engine's /openapi.json describes are generated into
// api-types.ts (`npm run gen:console-types`); the rest are written here, only the fields the console shows, until
// their routes document a response schema.
export type {
  Adinsert, BlueprintSummary, BrokerChannel, BrokerKey, GraphAnswer, Listing, Region, UploadSettings, WorkflowItem,
} from './api-types';

export interface ChannelDetail {
  workflowId: string;
  name: string;
  channelStatus: string;
  statusReason?: string;
  region: string;
  startRequestedDateTime: string | null;
  startedDateTime: string | null;
  stopRequestedDateTime: string | null;
  stoppedDateTime: string | null;
  inputs: Array<{ name: string; type: string; url: string; streamKey?: string; managedInputId?: string }>;
  activeInput: string | null;
  outputs: Array<{ destinationId: string; type: string; url: string; ssaiPlaybackUrl?: string; adServerId?: string }>;
  archive: { status: string; url: string | null };
}

export interface Alarm {
  [key: string]: unknown;
}

export interface VodProgress {
  percent: number;
  speedX?: number;
  etaSec?: number;
  stage?: string;
}

export interface VodInfo {
  guid: string;
  status: string;
  statusReason: string | null;
  progress: VodProgress | null;
  title: string | null;
  originalFileName: string | null;
  thumbnail: string | null;
  hlsUrl: string | null;
  dashUrl: string | null;
  mp4Urls: string[];
  duration: number | null;
  width: number | null;
  height: number | null;
  captions: { status: string; reason?: string; language?: string; vttUrl?: string; cues?: number } | null;
  meta?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface Envelope<T> {
  status: boolean;
  data: T;
}

export interface MetaGroupField {
  name: string;
  type: 'string' | 'number' | 'enum' | 'boolean' | 'json';
  required: boolean;
  min?: number;
  max?: number;
  additionalData?: { enumOptions?: string[] };
}

export interface MetaGroup {
  guid: string;
  name: string;
  attachment: string;
  fields: MetaGroupField[];
}

export interface PlaylistSource {
  guid: string;
  type: string;
  duration?: number;
  meta?: { title?: string };
}

export interface Playlist {
  guid: string;
  name: string;
  title?: string;
  description?: string;
  color?: string;
  duration?: number;
  sources: PlaylistSource[];
}

/** An entry of a debug session's log (GET /v1/debug/{guid}/{session}; ssai/store/debug-log.ts, docs/ssai-ad-ops.md). */
export type DebugEntry =
  | { kind: 'session'; at: number; mode: 'stitched' | 'guided'; origin: string; playerParams?: Record<string, string> }
  | { kind: 'origin'; at: number; url: string; status: number; ms: number; bytes?: number; code?: string; error?: string }
  | { kind: 'ad-request'; at: number; availId: string; url: string; ms: number; status?: number; bytes?: number; answer?: string; truncated?: true; error?: string }
  | {
    kind: 'decision'; at: number; availId: string; outcome: string; reason?: string;
    details?: {
      duration?: number;
      ads?: Array<{ adId: string; creativeId?: string; duration: number; slate?: true }>;
      skipped?: Array<{ adId: string; reason: string }>;
      error?: string;
    };
  };

export interface DebugLogAnswer {
  status: true;
  guid: string;
  session: string;
  entries: DebugEntry[];
}
