// Minimal typing of m3u8-parser 7 (the package ships no types): only what vod-encoder reads.
declare module 'm3u8-parser' {
  export interface M3u8Resolution {
    width: number;
    height: number;
  }
  export interface M3u8PlaylistRef {
    uri: string;
    timeline?: number;
    attributes: {
      BANDWIDTH?: number;
      'AVERAGE-BANDWIDTH'?: number;
      CODECS?: string;
      RESOLUTION?: M3u8Resolution;
      'FRAME-RATE'?: number;
      AUDIO?: string;
      SUBTITLES?: string;
      [key: string]: unknown;
    };
  }
  export interface M3u8Segment {
    uri: string;
    duration: number;
    timeline?: number;
    map?: { uri: string };
    discontinuity?: boolean;
    byterange?: { length: number; offset: number };
  }
  export interface M3u8MediaGroupEntry {
    default?: boolean;
    autoselect?: boolean;
    language?: string;
    uri?: string;
  }
  export interface M3u8Manifest {
    version?: number;
    allowCache?: boolean;
    playlistType?: string;
    targetDuration?: number;
    mediaSequence?: number;
    discontinuitySequence?: number;
    discontinuityStarts: number[];
    endList?: boolean;
    segments: M3u8Segment[];
    playlists?: M3u8PlaylistRef[];
    mediaGroups?: Record<string, Record<string, Record<string, M3u8MediaGroupEntry>>>;
  }
  export class Parser {
    manifest: M3u8Manifest;
    push(chunk: string): void;
    end(): void;
  }
}
