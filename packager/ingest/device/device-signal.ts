// The signal a connected device pushes (issue 18 part 8): generated picture and tone, encoded as its settings
// say. Settings are free-form on the engine side (spec 2.4 does not show them); the device reads these keys
// and reports every key back as it was given, understood or not.

export interface SignalSettings {
  width: number;
  height: number;
  frameRate: number;
  /** kbit/s */
  videoBitrate: number;
  /** kbit/s */
  audioBitrate: number;
}

export const DEFAULT_SIGNAL: SignalSettings = { width: 320, height: 180, frameRate: 25, videoBitrate: 400, audioBitrate: 64 };

const NAMED_HEIGHTS: Record<string, number> = { '180p': 180, '360p': 360, '480p': 480, '540p': 540, '720p': 720, '1080p': 1080 };

function positive(value: unknown, max: number): number | undefined {
  const number = typeof value === 'string' ? Number.parseFloat(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number > 0 && number <= max ? number : undefined;
}

/** `resolution` ("720p" or "1280x720"), `frameRate`, `bitrate` (video kbit/s), `audioBitrate`; others ignored. */
export function signalSettings(settings: Record<string, unknown>): SignalSettings {
  const signal = { ...DEFAULT_SIGNAL };
  const resolution = settings.resolution;
  if (typeof resolution === 'string') {
    const named = NAMED_HEIGHTS[resolution.toLowerCase()];
    const sized = /^(\d{2,4})x(\d{2,4})$/.exec(resolution);
    if (named) {
      signal.height = named;
      signal.width = Math.round((named * 16) / 9 / 2) * 2;
    } else if (sized) {
      signal.width = Number(sized[1]) - (Number(sized[1]) % 2);
      signal.height = Number(sized[2]) - (Number(sized[2]) % 2);
    }
  }
  signal.frameRate = positive(settings.frameRate, 120) ?? signal.frameRate;
  signal.videoBitrate = Math.round(positive(settings.bitrate, 100_000) ?? signal.videoBitrate);
  signal.audioBitrate = Math.round(positive(settings.audioBitrate, 512) ?? signal.audioBitrate);
  return signal;
}

/** The container a push URL takes: FLV for RTMP, RTP-wrapped MPEG-TS for RTP, MPEG-TS otherwise (SRT, RIST). */
export function pushFormat(url: string): string {
  const scheme = new URL(url).protocol.replace(':', '');
  if (scheme === 'rtmp' || scheme === 'rtmps') return 'flv';
  if (scheme === 'rtp') return 'rtp_mpegts';
  return 'mpegts';
}

/** ffmpeg arguments that push the test signal to `url` in real time, until killed. */
export function signalArgs(url: string, signal: SignalSettings): string[] {
  const { width, height, frameRate, videoBitrate, audioBitrate } = signal;
  return [
    '-loglevel', 'error', '-re',
    '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${frameRate}`,
    '-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000',
    '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency',
    '-b:v', `${videoBitrate}k`, '-maxrate', `${videoBitrate}k`, '-bufsize', `${videoBitrate * 2}k`, '-g', String(Math.round(frameRate * 2)),
    '-c:a', 'aac', '-b:a', `${audioBitrate}k`,
    '-f', pushFormat(url), url,
  ];
}
