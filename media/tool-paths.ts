// The ffmpeg and ffprobe binaries: from the engine config (DESIGN: FFMPEG_PATH/FFPROBE_PATH), set once at boot; PATH
// by default. The VOD encoder, the segment probe and the playlist check read them here.
const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };

export function configureToolPaths(paths: { ffmpegPath?: string; ffprobePath?: string }): void {
  if (paths.ffmpegPath) tools.ffmpeg = paths.ffmpegPath;
  if (paths.ffprobePath) tools.ffprobe = paths.ffprobePath;
}

export function ffmpegBin(): string {
  return tools.ffmpeg;
}

export function ffprobeBin(): string {
  return tools.ffprobe;
}
