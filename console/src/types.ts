// The shapes the console reads from the engine's API (see /openapi.json); only the fields it shows.

export interface BlueprintSummary {
  id: string;
  name: string;
  description: string;
  featured: boolean;
  tags: string[];
}

export interface Region {
  name: string;
  description: string;
  default?: boolean;
}

export interface WorkflowItem {
  id: string;
  name: string;
  description: string;
  status: string;
  statusReason: string | null;
  blueprintId: string | null;
  created: string;
  region: string;
  tags: string[];
}

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

export interface GraphAnswer {
  metric: string;
  unit: string;
  points: Array<{ timestamp: string; value: number }>;
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

export interface Adinsert {
  guid: string;
  name: string;
  adServer: string;
  type: string;
  masterEndpoint: string;
  sourceUrl: string;
  slateAd?: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface BrokerKey {
  name: string;
  guid: string;
  active: number;
  value: string;
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

export interface BrokerChannel {
  guid: string;
  name: string;
  description: string;
  active: number;
  type: 'externalHLS' | 'virtual';
  externalUrl?: string;
  hasAds: number;
  adinsert?: string;
  allowedForUsers: string[];
  allowedForRoles: string[];
  restrictedFor: string[];
  loopInterval?: number;
  imageUrl?: string;
  playbackUrl: string;
  createdAt: number;
  updatedAt: number;
}

export interface Listing {
  guid: string;
  channel: string;
  /** Unix seconds */
  start: number;
  end: number;
  title: string;
  description?: string;
  color?: string;
  imageUrl?: string;
  playlist?: string;
  vod?: string;
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
