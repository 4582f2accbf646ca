// Pull fronts (spec 2.4: URL_PULL, RTMP_PULL, MP4): the encoder opens the source itself, so a front only describes it.
// Who may push does not apply; a protected source takes a username and password (spec 2.4 "PULL protocols").
import type { IngestEvent, IngestFront, IngestProtocol, IngestStats } from '../ingest-front.js';

export class PullFront implements IngestFront {
  readonly spawnEncoderOn = 'start' as const;
  private readonly listeners = new Set<(event: IngestEvent) => void>();

  constructor(readonly protocol: IngestProtocol, private readonly args: string[], readonly publicUrl: string) {}

  encoderInputArgs(): string[] {
    return [...this.args];
  }

  subscribe(listener: (event: IngestEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): IngestStats {
    // ffmpeg reads the source itself: its byte count comes from the encoder's progress, not from here
    return { bytesIn: 0 };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
