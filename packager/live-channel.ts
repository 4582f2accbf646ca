// One running channel: its ingest front, its encoder (one ffmpeg at a time), the playlists the engine writes, and the
// alarms it raises. Files: DATA_DIR/live/<workflowId>/ (public: segments and playlists, served on /live) and
// DATA_DIR/live-work/<workflowId>/ (private: ffmpeg's own playlists, pid files, the state a restarted engine resumes).
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../kernel/core/logger.js';
import type { ChannelEndpoints, ChannelRuntimeEvent, ChannelSpec } from '../kernel/seams/channel-runtime.js';
import { buildEncoderPlan, type EncoderPlan } from './encode/encoder-plan.js';
import { EncoderSupervisor, type EncoderSource, type SupervisorEvent } from './encode/encoder-supervisor.js';
import type { FinishedSegment } from './encode/encoder-run.js';
import { LiveMediaPlaylist, type CueTag, type PlaylistSnapshot } from './hls/live-playlist.js';
import { MULTIVARIANT_NAME, mediaPlaylistName, renderMultivariant } from './hls/multivariant.js';
import type { BuiltFront, FrontRegistry } from './ingest/front-registry.js';
import { AdBreakScheduler } from './ads/ad-break-scheduler.js';
import { ArchiveRecorder, type ArchiveResult } from './archive/archive-recorder.js';
import { ChannelOutputs } from './outputs/channel-outputs.js';
import { ChannelSampler } from './graphs/channel-sampler.js';
import type { LiveMetrics } from './live-metrics.js';
import type { AdBreak } from '../kernel/seams/channel-runtime.js';
import { writeOwner, type ChannelOwner } from './channel-owner.js';

export interface ChannelDeps {
  ffmpegPath: string;
  /** reads the runs of an archive when it is merged */
  ffprobePath: string;
  dataDir: string;
  publicUrl: string;
  fronts: FrontRegistry;
  logger: Logger;
  emit(event: ChannelRuntimeEvent): void;
  /** written to the work dir: other packagers on this data directory leave the channel alone while it lives */
  owner: ChannelOwner;
  metrics?: LiveMetrics;
  sampleIntervalMs?: number;
}

/** What a restarted engine needs to continue a channel where it was (same numbering, one discontinuity). */
export interface ChannelState {
  spec: ChannelSpec;
  runNumber: number;
  /** each rendition's playlist: a resumed channel continues the same window (one discontinuity where it resumed) */
  playlists: Record<string, PlaylistSnapshot>;
  activeInput: string;
  /** wall clock (ms) of the last persist, at a segment's listing: where an outage's hole starts (program date-times drift behind the wall clock when the encoder runs slow) */
  savedAt?: number;
}

/** Why a resumed channel was off air (its packager was gone): reported as an alarm and in the archive once it is back. */
export interface Outage {
  reason: string;
}

/** The alarm of a channel that was off air: raised at its takeover, dated from the hole's start, cleared once back on air. */
export const OUTAGE_ALARM = 'CHANNEL_OUTAGE';

/** Per (run, index): the segment's place on the channel timeline, shared by every rendition. */
interface TimelineEntry {
  programDateTime: number;
  duration: number;
  discontinuity: boolean;
  cues: CueTag[];
}

const WINDOW_SECONDS = 60;
const PULL_PROTOCOLS = new Set(['URL_PULL', 'RTMP_PULL', 'MP4']);

export const liveDir = (dataDir: string, workflowId: string): string => path.join(dataDir, 'live', workflowId);
export const workDir = (dataDir: string, workflowId: string): string => path.join(dataDir, 'live-work', workflowId);

export class LiveChannel {
  readonly plan: EncoderPlan;
  readonly publicDir: string;
  readonly workDir: string;
  private readonly playlists = new Map<string, LiveMediaPlaylist>();
  private readonly ads: AdBreakScheduler;
  private readonly archive: ArchiveRecorder | undefined;
  private readonly outputs: ChannelOutputs;
  private running = false;
  private readonly sampler: ChannelSampler;
  private readonly activeAlarms = new Set<string>();
  private readonly fronts = new Map<string, BuiltFront>();
  /** inputs whose push sender is connected now */
  private readonly senders = new Set<string>();
  private readonly timeline = new Map<string, TimelineEntry>();
  private readonly firstOfRun = new Map<string, number>();
  private readonly removed: Array<{ file: string; at: number }> = [];
  private supervisor: EncoderSupervisor | undefined;
  private built: BuiltFront | undefined;
  private unsubscribeFront: (() => void) | undefined;
  private lastEnd = 0;
  private lastKey: string | undefined;
  private activeInput: string;
  private started: { resolve(): void; reject(error: Error): void } | undefined;
  private stopping = false;
  private writes = Promise.resolve();
  /** a resumed channel's hole, until its first new segment: since when (ms) and why */
  private outage: { since: number; reason: string } | undefined;

  constructor(readonly spec: ChannelSpec, private readonly deps: ChannelDeps, private readonly resumed?: ChannelState, outage?: Outage) {
    this.plan = buildEncoderPlan(spec);
    this.publicDir = liveDir(deps.dataDir, spec.workflowId);
    this.workDir = workDir(deps.dataDir, spec.workflowId);
    this.activeInput = resumed?.activeInput ?? spec.activeInput;
    this.ads = new AdBreakScheduler(this.plan.hls.segmentSeconds);
    this.outputs = new ChannelOutputs({
      plan: this.plan, publicDir: this.publicDir, workDir: this.workDir, ffmpegPath: deps.ffmpegPath, logger: deps.logger,
      alarm: (code, active, message) => this.alarm(code, active, message, 'WARNING'),
      bytesOut: (bytes) => this.sampler.output(bytes),
    });
    this.sampler = new ChannelSampler({
      encoderPid: () => this.supervisor?.pid,
      frontBytesIn: () => [...this.fronts.values()].reduce((sum, f) => sum + f.front.stats().bytesIn, 0),
      packetsLost: () => this.built?.front.stats().packetsLost ?? 0,
      activeAlarms: () => this.activeAlarms.size,
      slateOnAir: () => this.supervisor?.onAir === 'slate',
    }, (metric, value) => {
      deps.emit({ type: 'metric', workflowId: spec.workflowId, metric, value, at: Date.now() });
      deps.metrics?.graph(spec.workflowId, metric, value);
    }, deps.sampleIntervalMs);
    if (this.plan.archiveRenditionId) this.archive = new ArchiveRecorder({ dataDir: deps.dataDir, workflowId: spec.workflowId, ffmpegPath: deps.ffmpegPath, ffprobePath: deps.ffprobePath });
    const window = Math.max(5, Math.ceil(WINDOW_SECONDS / this.plan.hls.segmentSeconds));
    for (const r of this.plan.renditions) {
      const previous = resumed?.playlists?.[r.id];
      this.playlists.set(r.id, new LiveMediaPlaylist(window, this.plan.hls.segmentSeconds, previous));
      const last = previous?.segments.at(-1);
      // program date-times go on from where the previous engine left them
      if (last) this.lastEnd = Math.max(this.lastEnd, last.programDateTime + last.duration * 1000);
    }
    // the hole starts when the last segment was listed (the state is saved then)
    if (outage) this.outage = { since: resumed?.savedAt ?? (this.lastEnd || Date.now()), reason: outage.reason };
  }

  get workflowId(): string {
    return this.spec.workflowId;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  outputUrl(): string {
    return `${this.deps.publicUrl}/live/${this.workflowId}/${MULTIVARIANT_NAME}`;
  }

  /** Starts the encoder; resolves once every rendition has its first segment in its playlist. */
  async start(startTimeoutMs = 60_000): Promise<ChannelEndpoints> {
    if (!this.resumed) rmSync(this.publicDir, { recursive: true, force: true });
    rmSync(this.workDir, { recursive: true, force: true });
    mkdirSync(this.publicDir, { recursive: true });
    // the work dir appears with its owner file already in it (a rename), so a packager starting meanwhile on the same
    // data directory never sees it ownerless and takes it for an orphan
    const staging = path.join(path.dirname(this.workDir), `.${this.workflowId}-${randomBytes(4).toString('hex')}`);
    mkdirSync(staging, { recursive: true });
    writeOwner(staging, this.deps.owner);
    renameSync(staging, this.workDir);
    await this.persist();
    if (this.outage) {
      const { since, reason } = this.outage;
      this.activeAlarms.add(OUTAGE_ALARM);
      this.deps.emit({ type: 'alarm', workflowId: this.workflowId, code: OUTAGE_ALARM, severity: 'CRITICAL', active: true, at: since, message: `off air since ${new Date(since).toISOString()}: ${reason}` });
    }
    const multivariant = renderMultivariant(this.plan.renditions);
    await writeFile(path.join(this.publicDir, MULTIVARIANT_NAME), multivariant);
    this.outputs.multivariantWritten(multivariant);
    const running = new Promise<void>((resolve, reject) => { this.started = { resolve, reject }; });
    const timer = setTimeout(() => this.started?.reject(new Error(`no segment was written within ${Math.round(startTimeoutMs / 1000)} s`)), startTimeoutMs);
    try {
      this.supervisor = new EncoderSupervisor({
        ffmpegPath: this.deps.ffmpegPath, plan: this.plan, publicDir: this.publicDir, workDir: this.workDir,
        firstRun: this.resumed?.runNumber ?? 0, logger: this.deps.logger, onEvent: (event) => this.onSupervisor(event),
      });
      await this.attachInput(this.activeInput);
      await running;
      this.running = true;
      this.outputs.start();
      this.sampler.start();
    } finally {
      clearTimeout(timer);
      this.started = undefined;
    }
    return {
      inputs: await this.inputEndpoints(),
      outputs: this.outputs.endpoints(this.outputUrl()),
    };
  }

  /** Every input's endpoint, from its front (all fronts stay open while the channel runs: keys and ports stay put). */
  private async inputEndpoints(): Promise<ChannelEndpoints['inputs']> {
    const endpoints: ChannelEndpoints['inputs'] = [];
    for (const section of Object.values(this.spec.blueprint.components)) {
      const { front, endpoint } = await this.frontOf(section.input.name);
      endpoints.push({ name: section.input.name, type: front.protocol, url: endpoint.url, ...(endpoint.streamKey ? { streamKey: endpoint.streamKey } : {}) });
    }
    return endpoints;
  }

  private blueprintInput(name: string): Record<string, unknown> & { name: string; type?: string } {
    for (const section of Object.values(this.spec.blueprint.components)) if (section.input.name === name) return section.input;
    throw new Error(`the blueprint has no input named ${name}`);
  }

  /** The front of an input, opened on first use and kept (with whether a sender is connected) until the channel stops. */
  private async frontOf(name: string): Promise<BuiltFront> {
    let built = this.fronts.get(name);
    if (!built) {
      built = await this.deps.fronts.create({ spec: this.spec, input: this.blueprintInput(name), dataDir: this.deps.dataDir });
      this.fronts.set(name, built);
      built.front.subscribe((event) => {
        if (event.type === 'connected') this.senders.add(name);
        if (event.type === 'disconnected') this.senders.delete(name);
        if (event.type === 'rejected') this.deps.logger.warn({ input: name, reason: event.reason, remote: event.remoteAddress }, 'a sender was refused');
      });
    }
    return built;
  }

  /** Puts an input on air (a push input shows the slate until its sender is there). */
  private async attachInput(name: string): Promise<void> {
    const built = await this.frontOf(name);
    this.unsubscribeFront?.();
    this.built = built;
    this.activeInput = name;
    const pull = PULL_PROTOCOLS.has(built.front.protocol);
    const source: EncoderSource = {
      name, args: () => built.front.encoderInputArgs(), probe: pull, listens: !pull && built.front.spawnEncoderOn === 'start',
      ...(built.front.drain ? { drain: () => built.front.drain!() } : {}),
    };
    this.unsubscribeFront = built.front.subscribe((event) => {
      if (event.type === 'connected') this.supervisor?.inputConnected(source);
    });
    if (source.listens) await this.supervisor!.useSlateAndListen(source);
    else if (built.front.spawnEncoderOn === 'start' || this.senders.has(name)) await this.supervisor!.useSource(source);
    else {
      // expected before the slate starts: a sender accepted meanwhile goes on air after it
      this.supervisor!.expectSource(source);
      await this.supervisor!.useSlate();
      // a sender that pushed before we subscribed (encoder or device started first) was reported to nobody
      if (built.front.isConnected?.()) this.supervisor!.inputConnected(source);
    }
  }

  /** Announces an ad break in every playlist at once (future START-DATE); the cues follow on the segments. */
  async insertAdBreak(adBreak: AdBreak): Promise<{ startsAt: number }> {
    if (this.lastEnd === 0) throw new Error('the channel has no segment yet');
    const boundary = this.ads.schedule(adBreak, this.lastEnd);
    this.ads.prune(Date.now() - 2 * WINDOW_SECONDS * 1000);
    this.deps.logger.info({ spliceEventId: adBreak.spliceEventId, startsAt: new Date(boundary).toISOString(), duration: adBreak.duration }, 'ad break scheduled');
    await this.serial(async () => {
      for (const r of this.plan.renditions) this.outputs.playlistWritten(r.id, await this.writePlaylist(r.id));
    });
    return { startsAt: boundary };
  }

  async switchInput(name: string): Promise<void> {
    if (name === this.activeInput) return;
    await this.attachInput(name);
    await this.persist();
  }

  private onSupervisor(event: SupervisorEvent): void {
    const at = Date.now();
    if (event.type === 'segment') void this.serial(() => this.onSegment(event.segment));
    else if (event.type === 'alarm') this.alarm(event.code, event.active, event.message, event.severity);
    else if (event.type === 'progress') this.sampler.progress(event.sample);
    else if (event.type === 'run') {
      this.sampler.newRun();
      this.deps.metrics?.encoderRuns.inc({ kind: event.kind });
    }
    else if (event.type === 'start-failed') this.started?.reject(new Error(event.reason));
    else if (event.type === 'failed') {
      if (this.started) this.started.reject(new Error(event.reason));
      else this.deps.emit({ type: 'failed', workflowId: this.workflowId, reason: event.reason, at });
    }
  }

  private alarm(code: string, active: boolean, message: string, severity: 'WARNING' | 'CRITICAL'): void {
    if (active) this.activeAlarms.add(code);
    else this.activeAlarms.delete(code);
    this.deps.emit({ type: 'alarm', workflowId: this.workflowId, code, message, severity, active, at: Date.now() });
  }

  /** Playlist work runs one step at a time, in arrival order (two writers of one playlist would mix their files). */
  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.writes.then(work);
    this.writes = next.catch((error: unknown) => this.deps.logger.error({ err: error }, 'writing a live playlist failed'));
    return next;
  }

  /** Places a segment on the channel timeline (the first rendition to report it decides) and in its playlist. */
  private async onSegment(segment: FinishedSegment): Promise<void> {
    if (this.outage) await this.backOnAir();
    if (segment.renditionId === this.plan.archiveRenditionId) {
      await this.archive?.record(path.join(this.publicDir, segment.file), segment.duration, segment.run, segment.map ? path.join(this.publicDir, segment.map) : undefined);
    }
    if (segment.renditionId === this.plan.archiveOnly?.id) {
      // the archive's own rendition has no playlist: once recorded (a hard link) its public copy goes at once
      await rm(path.join(this.publicDir, segment.file), { force: true });
      return;
    }
    if (this.stopping) return;
    const key = `${segment.run}:${segment.index}`;
    let entry = this.timeline.get(key);
    if (!entry) {
      const newRun = this.lastKey?.split(':')[0] !== segment.run;
      const cues = this.ads.cuesFor(newRun ? Math.max(this.lastEnd, Date.now() - segment.duration * 1000) : this.lastEnd);
      const programDateTime = cues.start;
      entry = { programDateTime, duration: segment.duration, discontinuity: newRun && (this.lastKey !== undefined || !!this.resumed), cues: cues.tags };
      this.timeline.set(key, entry);
      this.lastKey = key;
      this.lastEnd = programDateTime + segment.duration * 1000;
      if (this.timeline.size > 64) this.timeline.delete(this.timeline.keys().next().value!);
    }
    const first = this.firstOfRun.get(`${segment.renditionId}:${segment.run}`);
    if (first === undefined) this.firstOfRun.set(`${segment.renditionId}:${segment.run}`, segment.index);
    const playlist = this.playlists.get(segment.renditionId);
    if (!playlist) return;
    const gone = playlist.append({
      uri: segment.file, duration: segment.duration, programDateTime: entry.programDateTime,
      discontinuity: entry.discontinuity && first === undefined, cues: entry.cues, ...(segment.map ? { map: segment.map } : {}),
    });
    const now = Date.now();
    for (const file of gone) this.removed.push({ file, at: now });
    try {
      this.sampler.segment(segment.renditionId, statSync(path.join(this.publicDir, segment.file)).size, segment.duration);
    } catch {
      /* already gone */
    }
    const text = await this.writePlaylist(segment.renditionId);
    this.outputs.segmentWritten(segment.renditionId, segment.file, segment.map, text, gone);
    // segments that left the window stay one more window for players that are still fetching them
    while (this.removed.length && now - this.removed[0]!.at > WINDOW_SECONDS * 1000) {
      await rm(path.join(this.publicDir, this.removed.shift()!.file), { force: true });
    }
    if (segment.renditionId === this.plan.renditions[0]?.id) await this.persist();
    if (this.started && [...this.playlists.values()].every((p) => p.segments.length > 0)) this.started.resolve();
  }

  /**
   * The first segment after a hole: the outage is reported with the seconds it lasted (the alarm cleared with them,
   * a log line, a metric) and listed in the archive, whose merged file joins the runs on either side back to back.
   */
  private async backOnAir(): Promise<void> {
    const { since, reason } = this.outage!;
    this.outage = undefined;
    const to = Date.now();
    const seconds = Math.round((to - since) / 100) / 10;
    const [from, until] = [new Date(since).toISOString(), new Date(to).toISOString()];
    this.activeAlarms.delete(OUTAGE_ALARM);
    this.deps.emit({
      type: 'alarm', workflowId: this.workflowId, code: OUTAGE_ALARM, severity: 'CRITICAL', active: false, at: to,
      message: 'back on air', finalMessage: `off air for ${seconds} s (${from} to ${until}): ${reason}`,
    });
    this.deps.metrics?.outageSeconds.observe(seconds);
    this.deps.logger.warn({ outageSeconds: seconds, from, to: until, reason }, 'channel back on air after an outage');
    await this.archive?.recordGap({ seconds, from, to: until, reason }).catch((error: unknown) =>
      this.deps.logger.error({ err: error }, 'the outage could not be listed in the archive'));
  }

  private async writePlaylist(renditionId: string): Promise<string> {
    const playlist = this.playlists.get(renditionId);
    if (!playlist) return '';
    const file = path.join(this.publicDir, mediaPlaylistName(renditionId));
    const text = playlist.render(this.ads.ranges());
    await writeFile(`${file}.tmp`, text);
    await rename(`${file}.tmp`, file);
    return text;
  }

  private async persist(): Promise<void> {
    const state: ChannelState = {
      spec: this.spec,
      runNumber: this.supervisor?.runsStarted ?? this.resumed?.runNumber ?? 0,
      playlists: Object.fromEntries([...this.playlists].map(([id, p]) => [id, p.snapshot()])),
      activeInput: this.activeInput,
      savedAt: Date.now(),
    };
    const file = path.join(this.workDir, 'state.json');
    await writeFile(`${file}.tmp`, JSON.stringify(state)).then(() => rename(`${file}.tmp`, file)).catch(() => undefined);
  }

  /** For the benchmark: the encoder's speed and when its run started. */
  encoderStats(): { speedX: number; runStartedAt: number | undefined } {
    return { speedX: this.sampler.speedX, runStartedAt: this.supervisor?.runStartedAt };
  }

  /** For the fault tests: the pid of the encoder on air. */
  encoderPid(): number | undefined {
    return this.supervisor?.pid;
  }

  private endSampling(): void {
    this.sampler.stop();
    for (const metric of ['NETWORK_IN', 'NETWORK_OUT', 'DROPPED_FRAMES', 'ACTIVE_ALERTS', 'INPUT_VIDEO_FRAME_RATE', 'FILL_MS', 'UDP_INPUT_LOSS', 'SVQ_TIME'] as const) {
      this.deps.metrics?.graph(this.workflowId, metric, undefined);
    }
  }

  /** Engine shutdown: ends the encoder but keeps the files and the state, so the next engine resumes the channel. */
  async halt(): Promise<void> {
    this.stopping = true;
    this.started?.reject(new Error('the engine is shutting down'));
    this.endSampling();
    await this.supervisor?.stop();
    await this.outputs.stop();
    this.unsubscribeFront?.();
    await Promise.all([...this.fronts.values()].map((f) => f.front.close().catch(() => undefined)));
    await this.writes;
  }

  /**
   * Stops everything the channel started; the archive (when recording) is merged as the last step. A channel that
   * never ran (a failed start) keeps no archive.
   */
  async stop(): Promise<ArchiveResult | undefined> {
    this.stopping = true;
    this.started?.reject(new Error('the channel was stopped while starting'));
    this.endSampling();
    await this.supervisor?.stop(this.running && this.archive !== undefined);
    await this.outputs.stop();
    this.unsubscribeFront?.();
    await Promise.all([...this.fronts.values()].map((f) => f.front.close().catch(() => undefined)));
    await this.writes;
    rmSync(this.workDir, { recursive: true, force: true });
    rmSync(this.publicDir, { recursive: true, force: true });
    if (!this.archive) return undefined;
    if (!this.running) {
      await this.archive.discard();
      return undefined;
    }
    return this.archive.finish();
  }
}

