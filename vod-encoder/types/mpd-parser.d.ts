// Minimal typing of mpd-parser 1.x (the package ships no types): only what vod-encoder reads.
declare module 'mpd-parser' {
  export interface MpdSegment {
    uri: string;
    resolvedUri: string;
    duration: number;
    number: number;
    presentationTime?: number;
    timeline: number;
    map?: { uri: string; resolvedUri: string };
  }
  export interface MpdPlaylist {
    attributes: {
      NAME?: string;
      BANDWIDTH?: number;
      CODECS?: string;
      RESOLUTION?: { width: number; height: number };
      'FRAME-RATE'?: number;
      'PROGRAM-ID'?: number;
      [key: string]: unknown;
    };
    uri: string;
    endList: boolean;
    timeline: number;
    targetDuration: number;
    mediaSequence: number;
    discontinuitySequence?: number;
    discontinuityStarts: number[];
    segments: MpdSegment[];
  }
  export interface MpdGroupEntry {
    language?: string;
    default?: boolean;
    autoselect?: boolean;
    playlists: MpdPlaylist[];
  }
  export interface MpdManifest {
    duration: number;
    endList: boolean;
    playlists: MpdPlaylist[];
    mediaGroups: Record<string, Record<string, Record<string, MpdGroupEntry>>>;
  }
  export function parse(manifestString: string, options?: { manifestUri?: string }): MpdManifest;
}
