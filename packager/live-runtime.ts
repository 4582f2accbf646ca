// The engine's ChannelRuntime (kernel/seams/channel-runtime.ts): runs each started channel as a LiveChannel in this process.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../kernel/core/logger.js';
import type { AdBreak, ChannelEndpoints, ChannelRuntime, ChannelRuntimeEvent, ChannelSpec } from '../kernel/seams/channel-runtime.js';
import { killOrphans } from '../media/ffmpeg-orphans.js';
import { claimWorkDir, ownerAlive, ownerOf, readOwner, registerRuntime, type ChannelOwner } from './channel-owner.js';
import { FrontRegistry } from './ingest/front-registry.js';
import { LiveChannel, liveDir, workDir, type ChannelState, type Outage } from './live-channel.js';
import type { ArchiveGap } from './archive/archive-recorder.js';
import type { LiveMetrics } from './live-metrics.js';

export interface LiveRuntimeOptions {
  ffmpegPath: string;
  ffprobePath: string;
  dataDir: string;
  /** read at each start: the engine learns its URL only after listening (PORT=0) */
  publicUrl: () => string;
  logger: Logger;
  /** a merged archive (spec 3.3) is also a VOD source with status `archive` (spec 2.12): registered here */
  onArchive?: (info: { spec: ChannelSpec; relativePath: string; url: string; seconds: number; gaps: ArchiveGap[] }) => Promise<void>;
  metrics?: LiveMetrics;
  sampleIntervalMs?: number;
  /** how long a start may wait for the first segment */
  startTimeoutMs?: number;
  /** names this runtime in its channels' owner files (default: host, pid and a random part) */
  id?: string;
}

export class LiveRuntime implements ChannelRuntime {
  readonly fronts = new FrontRegistry();
  private readonly channels = new Map<string, LiveChannel>();
  private readonly listeners = new Set<(event: ChannelRuntimeEvent) => void>();

  readonly id: string;
  private readonly owner: ChannelOwner;
  private readonly unregister: () => void;

  constructor(private readonly options: LiveRuntimeOptions) {
    // the form of a channel-command worker's id: the packager part gives the worker this id, so the database's
    // packager heartbeats tell whether the owner named in a work dir on a shared volume is alive on another host
    this.id = options.id ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.owner = ownerOf(this.id);
    this.unregister = registerRuntime(this.id);
  }

  private recovered: ChannelState[] = [];

  /** The states recoverOrphans found, once (the packager part resumes or fails them). */
  takeRecovered(): ChannelState[] {
    const states = this.recovered;
    this.recovered = [];
    return states;
  }

  /**
   * Ends the encoders a killed engine left running; keeps the states of the channels they served. Only channels whose
   * owner (packager/channel-owner.ts) is gone are taken: packagers sharing DATA_DIR leave each other's channels alone.
   */
  recoverOrphans(): ChannelState[] {
    const root = path.join(this.options.dataDir, 'live-work');
    let names: string[] = [];
    try {
      names = readdirSync(root).filter((name) => !name.startsWith('.')); // dot dirs: work dirs being set up
    } catch {
      return [];
    }
    const dirs = names.map((name) => path.join(root, name)).filter((dir) => claimWorkDir(dir, this.owner));
    const killed = killOrphans(dirs);
    if (killed > 0) this.options.logger.warn({ killed }, 'ended encoders left by a previous engine');
    const states: ChannelState[] = [];
    for (const dir of dirs) {
      try {
        states.push(JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as ChannelState);
      } catch {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (names.length > dirs.length) this.options.logger.info({ others: names.length - dirs.length }, 'channels of other live packagers on this data directory left alone');
    this.recovered = states;
    return states;
  }

  /**
   * Takes over a RUNNING channel this runtime does not run whose owner is gone: a packager of this host that died, or
   * one of another host (shared volume) that `aliveElsewhere` says no longer beats. Its encoders are ended when they
   * are on this host; the state to resume it from is returned (undefined: not ours to take; null: taken, but nothing
   * is left to resume it from).
   */
  adoptOrphan(workflowId: string, aliveElsewhere: (runtimeId: string) => boolean): ChannelState | null | undefined {
    if (this.channels.has(workflowId)) return undefined;
    const dir = workDir(this.options.dataDir, workflowId);
    const owner = readOwner(dir);
    if (!owner || owner.runtimeId === this.id) return undefined;
    const alive = (o: ChannelOwner) => (o.host === os.hostname() ? ownerAlive(o) : aliveElsewhere(o.runtimeId));
    if (!claimWorkDir(dir, this.owner, alive)) return undefined;
    const killed = killOrphans([dir]);
    this.options.logger.warn({ workflowId, previousOwner: owner.runtimeId, host: owner.host, killed }, 'took over the channel of a packager that is gone');
    try {
      return JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as ChannelState;
    } catch {
      return null;
    }
  }

  /**
   * Channels whose work dir another packager has taken over (it judged this one gone: a stalled process, a host cut
   * off from the database) end here at once, files kept: two encoders must never write one channel.
   */
  async fence(): Promise<string[]> {
    const lost = [...this.channels.values()].filter((channel) => {
      const owner = readOwner(channel.workDir);
      return owner !== undefined && owner.runtimeId !== this.id;
    });
    for (const channel of lost) {
      this.channels.delete(channel.workflowId);
      this.options.logger.error({ workflowId: channel.workflowId, owner: readOwner(channel.workDir)?.runtimeId }, 'another packager took this channel over: ending it here');
    }
    this.options.metrics?.channelsRunning.set(this.channels.size);
    await Promise.allSettled(lost.map((channel) => channel.halt()));
    return lost.map((channel) => channel.workflowId);
  }

  /** Whether another live packager runs this channel from the shared data directory (its work dir says so). */
  runsElsewhere(workflowId: string): boolean {
    const owner = readOwner(workDir(this.options.dataDir, workflowId));
    return owner !== undefined && owner.runtimeId !== this.id && ownerAlive(owner);
  }

  /** The runtime named in the channel's work dir as running it, if any. */
  ownerOf(workflowId: string): string | undefined {
    return readOwner(workDir(this.options.dataDir, workflowId))?.runtimeId;
  }

  /** Whether the channel's work dir exists (a shared data directory: some packager ran it from here). */
  hasWorkDir(workflowId: string): boolean {
    return existsSync(workDir(this.options.dataDir, workflowId));
  }

  private emit = (event: ChannelRuntimeEvent): void => {
    if (event.type === 'alarm' && event.active) this.options.metrics?.alarms.inc({ code: event.code });
    for (const listener of this.listeners) listener(event);
  };

  /** Reports an event on behalf of a channel (restart recovery). */
  report(event: ChannelRuntimeEvent): void {
    this.emit(event);
  }

  private create(spec: ChannelSpec, resumed?: ChannelState, outage?: Outage): LiveChannel {
    return new LiveChannel(spec, {
      ffmpegPath: this.options.ffmpegPath, ffprobePath: this.options.ffprobePath, dataDir: this.options.dataDir, publicUrl: this.options.publicUrl(), fronts: this.fronts, owner: this.owner,
      logger: this.options.logger.child({ workflowId: spec.workflowId }), emit: this.emit,
      ...(this.options.metrics ? { metrics: this.options.metrics } : {}),
      ...(this.options.sampleIntervalMs ? { sampleIntervalMs: this.options.sampleIntervalMs } : {}),
    }, resumed, outage);
  }

  async start(spec: ChannelSpec): Promise<ChannelEndpoints> {
    if (this.channels.has(spec.workflowId)) throw new Error(`the channel of workflow ${spec.workflowId} already runs`);
    const channel = this.create(spec);
    this.channels.set(spec.workflowId, channel);
    this.options.metrics?.channelsRunning.set(this.channels.size);
    return channel.start(this.options.startTimeoutMs);
  }

  /**
   * Continues a channel the previous engine ran (after orphan cleanup): same numbering, one discontinuity. `outage`:
   * the channel was off air meanwhile (its packager gone): reported as an alarm spanning the hole, and in the archive.
   */
  async resume(state: ChannelState, outage?: Outage): Promise<ChannelEndpoints> {
    if (this.channels.has(state.spec.workflowId)) throw new Error(`the channel of workflow ${state.spec.workflowId} already runs`);
    const channel = this.create(state.spec, state, outage);
    this.channels.set(state.spec.workflowId, channel);
    return channel.start(this.options.startTimeoutMs);
  }

  async stop(workflowId: string): Promise<{ archiveUrl?: string }> {
    const channel = this.channels.get(workflowId);
    if (!channel) {
      // another packager's channel (a control plane recovering, or a stray command): its files are not ours to remove
      if (this.runsElsewhere(workflowId)) return {};
      // nothing runs here (a failed start already rolled back, or a restart): remove what may be left on disk
      rmSync(workDir(this.options.dataDir, workflowId), { recursive: true, force: true });
      rmSync(liveDir(this.options.dataDir, workflowId), { recursive: true, force: true });
      return {};
    }
    let archive;
    try {
      archive = await channel.stop();
    } finally {
      this.channels.delete(workflowId);
      this.options.metrics?.channelsRunning.set(this.channels.size);
    }
    if (!archive) return {};
    const url = `${this.options.publicUrl()}/media/${archive.relativePath}`;
    await this.options.onArchive?.({ spec: channel.spec, relativePath: archive.relativePath, url, seconds: archive.seconds, gaps: archive.gaps }).catch((error: unknown) =>
      this.options.logger.warn({ err: error, workflowId }, 'the archive could not be listed as a VOD source'));
    return { archiveUrl: url };
  }

  private running(workflowId: string): LiveChannel {
    const channel = this.channels.get(workflowId);
    if (!channel) throw new Error(`the channel of workflow ${workflowId} does not run in this engine`);
    return channel;
  }

  async insertAdBreak(workflowId: string, adBreak: AdBreak): Promise<{ startsAt: number }> {
    return this.running(workflowId).insertAdBreak(adBreak);
  }

  async switchInput(workflowId: string, input: string): Promise<void> {
    await this.running(workflowId).switchInput(input);
  }

  subscribe(listener: (event: ChannelRuntimeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  channel(workflowId: string): LiveChannel | undefined {
    return this.channels.get(workflowId);
  }

  /** Engine shutdown: encoders end, channels stay resumable by the next engine. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.channels.values()].map((channel) => channel.halt()));
    this.channels.clear();
    // from now on the channels it halted count as orphans: the next packager on this data directory resumes them
    this.unregister();
  }
}
