// Virtual channels played as live HLS (issue 15 "Playback"): the assembler of packager/linear/ over the broker's
// schedule, on the packager role.
import path from 'node:path';
import type { EnginePart } from '../kernel/part.js';
import { linearScheduleSource, mediaDirOf, mediaUrlOf } from '../src/broker-channels/linear-schedule.js';
import type { LinearAsset } from '../packager/linear/asset.js';
import { AssetCache, loadAsset } from '../packager/linear/asset-loader.js';
import { LinearServer } from '../packager/linear/linear-server.js';
import { ensureSlate, SLATE_DIR } from '../packager/linear/slate.js';

declare module '../kernel/context.js' {
  interface EngineServices {
    /** present on the packager role; broker writes call invalidate() so this process answers the new schedule at once */
    linear?: LinearServer;
  }
}

export const linearPart: EnginePart = {
  name: 'linear',
  roles: ['packager'],
  init: (ctx) => {
    let slate: Promise<LinearAsset> | undefined;
    const log = ctx.logger.child({ component: 'linear' });
    ctx.services.linear = new LinearServer({
      source: linearScheduleSource(ctx),
      assets: new AssetCache(),
      // Made on first use; a failure is retried at the next model build.
      slate: () => (slate ??= (async () => {
        const dir = await ensureSlate(mediaDirOf(ctx), ctx.config.ffmpegPath);
        return loadAsset({ id: 'slate', dir, baseUrl: `${mediaUrlOf(ctx)}/${SLATE_DIR}` });
      })().catch((error: unknown) => {
        log.error({ err: error, dir: path.join(mediaDirOf(ctx), SLATE_DIR) }, 'the slate of virtual channels could not be made');
        slate = undefined;
        throw error;
      })),
      now: () => ctx.clock.nowMs(),
      logger: log,
      registry: ctx.metrics.registry,
      windowSegments: ctx.config.linearWindowSegments,
    });
  },
  rawHandler: (ctx) => ctx.services.linear?.handler() ?? (() => false),
};
