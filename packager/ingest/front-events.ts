// The listener list every front keeps for the contract's subscribe(); a throwing listener never stops the others.
import type { IngestEvent } from './ingest-front.js';

export class FrontEvents {
  private readonly listeners = new Set<(event: IngestEvent) => void>();

  subscribe(listener: (event: IngestEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: IngestEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // a subscriber's bug is its own; the front keeps running
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
