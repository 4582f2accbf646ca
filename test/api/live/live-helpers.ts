// A ChannelRuntime double for the live API tests (tests only: the engine's runtime is the packager's).
import fs from 'node:fs';
import path from 'node:path';
import type { AdBreak, ChannelEndpoints, ChannelRuntime, ChannelRuntimeEvent, ChannelSpec } from '../../../kernel/seams/channel-runtime.js';
import type { TestEngine } from '../../helpers/engine.js';
import type { LiveServices } from '../../../wiring/live.part.js';

export function catalogBlueprint(id: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.resolve('fixtures/blueprints', `${id}.json`), 'utf8')) as Record<string, unknown>;
}

export function live(engine: TestEngine): LiveServices {
  const services = engine.ctx.services.live;
  if (!services) throw new Error('live part missing');
  return services;
}

interface Deferred<T> { promise: Promise<T>; resolve(value: T): void; reject(error: Error): void }
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

export class RuntimeDouble implements ChannelRuntime {
  readonly started: ChannelSpec[] = [];
  readonly stopped: string[] = [];
  readonly adBreaks: Array<{ workflowId: string; adBreak: AdBreak }> = [];
  readonly switches: Array<{ workflowId: string; input: string }> = [];
  /** set to hold starts until released by hand */
  holdStarts = false;
  failStart: string | undefined;
  failStop: string | undefined;
  archiveUrl: string | undefined = 'http://archive.local/a.mp4';
  private held: Array<Deferred<ChannelEndpoints>> = [];
  private listeners: Array<(event: ChannelRuntimeEvent) => void> = [];

  endpoints(spec: ChannelSpec): ChannelEndpoints {
    return {
      inputs: Object.values(spec.blueprint.components).map(({ input }) => ({ name: input.name, type: String(input.type ?? 'MANAGED'), url: `rtmp://ingest.local/${spec.workflowId}/${input.name}` })),
      outputs: [{ destinationId: 'hls-origin', type: 'HLS', url: `http://origin.local/live/${spec.workflowId}/index.m3u8` }],
    };
  }

  async start(spec: ChannelSpec): Promise<ChannelEndpoints> {
    this.started.push(spec);
    if (this.failStart) throw new Error(this.failStart);
    if (this.holdStarts) {
      const wait = deferred<ChannelEndpoints>();
      this.held.push(wait);
      return wait.promise;
    }
    return this.endpoints(spec);
  }

  releaseStarts(): void {
    for (const wait of this.held.splice(0)) wait.resolve({ inputs: [], outputs: [] });
  }

  async stop(workflowId: string): Promise<{ archiveUrl?: string }> {
    this.stopped.push(workflowId);
    if (this.failStop) throw new Error(this.failStop);
    return this.archiveUrl ? { archiveUrl: this.archiveUrl } : {};
  }

  async insertAdBreak(workflowId: string, adBreak: AdBreak): Promise<void> {
    this.adBreaks.push({ workflowId, adBreak });
  }

  async switchInput(workflowId: string, input: string): Promise<void> {
    this.switches.push({ workflowId, input });
  }

  subscribe(listener: (event: ChannelRuntimeEvent) => void): () => void {
    this.listeners.push(listener);
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }

  emit(event: ChannelRuntimeEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
