// What other parts (the packager) may know of managed inputs: the fixed ingest address to listen on at a channel
// start, and the source to pull with its credentials. Channels never allocate addresses. The control plane
// (src/inputs) owns the inputs and their store and implements this seam; the wiring registers it.

/** The ingest address allocated once, at the input's creation. */
export interface ManagedInputIngest {
  /** the URL a sender pushes to; undefined for PULL protocols and MP4 (the engine fetches the source) */
  url: string | undefined;
  /** the RTMP stream key or the SRT passphrase */
  streamKey: string | undefined;
  /** the listener port for SRT, RIST, RTP and RTP_FEC inputs and connected devices */
  port: number | undefined;
}

/** A managed input as a runtime sees it (the control plane's record has more). */
export interface ManagedInputRecord {
  id: string;
  name: string;
  /** VIRTUAL_INPUT, CONNECTED_DEVICE … */
  type: string;
  /** RTMP_PUSH, SRT_PUSH, URL_PULL …; undefined for a connected device */
  protocol: string | undefined;
  cidrs: string[];
  ingest: ManagedInputIngest;
}

export interface ManagedInputSource {
  input: ManagedInputRecord;
  /** the PULL source password in clear, for the runtime that fetches the source; never sent to clients */
  password: string | undefined;
}

export interface ManagedInputs {
  /** undefined for an unknown id or another organization's input */
  get(organizationId: string, id: string): Promise<ManagedInputSource | undefined>;
}

declare module '../context.js' {
  interface EngineServices {
    managedInputs?: ManagedInputs;
  }
}

/** The host of PUBLIC_URL, bracketed for IPv6 literals as URL.hostname already does: every ingest URL names it. */
export function ingestHost(publicUrl: string): string {
  return new URL(publicUrl).hostname;
}
