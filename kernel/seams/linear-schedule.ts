// What the assembler (packager/linear) reads of the broker (issue 15): a virtual channel's listings with what each
// plays. The control plane implements it over its store (src/broker-channels/linear-schedule.ts); the packager never
// reads tables itself.

/** Where a playable VOD's HLS lies in the media store. */
export interface AssetLocation {
  id: string;
  /** directory holding master.m3u8 */
  dir: string;
  /** URL of that directory, for the absolute segment URLs */
  baseUrl: string;
  master?: string;
}

export interface LinearAdRef { start: number; vod: string; substitute: 0 | 1 }
export interface LinearSourceRef { vod: string; ads?: LinearAdRef[] }

export interface LinearListing {
  guid: string;
  /** Unix seconds (spec 2.9) */
  start: number;
  end: number;
  /** in order; none: the listing plays slate */
  sources: LinearSourceRef[];
}

export interface LinearSchedule {
  guid: string;
  loopIntervalHours?: number;
  /**
   * Wall clock (epoch ms) the channel's media sequence and discontinuity numbers count from: fixed for the channel
   * (its creation less a day: listings may be posted for the hours just gone, and a window reaches back from now).
   */
  numberedFromMs?: number;
  /** every listing of the channel, by start */
  listings: LinearListing[];
}

export interface LinearScheduleSource {
  /** undefined: no virtual channel has this guid */
  load(channelGuid: string): Promise<LinearSchedule | undefined>;
  /** where a playable VOD's HLS is, undefined when it is gone or not playable */
  locate(vodGuid: string): Promise<AssetLocation | undefined>;
  /** the HMAC in the playback path (src/broker-channels/playback-url.ts) */
  token(channelGuid: string): string;
}
