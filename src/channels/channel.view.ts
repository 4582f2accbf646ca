// The channel detail of GET /channels[/{workflowId}] (spec 2.3, DESIGN.md), with the SSAI playback URL of 4.2.
import { sql } from 'kysely';
import type { EngineContext } from '../../kernel/context.js';
import type { Workflow } from '../workflows/workflow.store.js';

/** What the SSAI URL needs of an ad-insertion configuration (spec 2.11). */
interface AdinsertRef {
  id: string;
  type: string;
  sourceUrl: string;
}
type AdinsertFinder = (organizationId: string, id: string) => Promise<AdinsertRef | undefined>;

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** The adinsert table of the broker part, read directly when that part gives no lookup service; absent table: none. */
function finder(ctx: EngineContext): AdinsertFinder {
  const lookup = ctx.services.adinsertLookup;
  if (lookup) {
    return (organizationId, id) => lookup.get(organizationId, id);
  }
  return async (organizationId, id) => {
    try {
      const result = await sql<{ id: string; type: string; source_url: string }>`select id, type, source_url from adinserts where organization_id = ${organizationId} and id = ${id}`.execute(ctx.store.db);
      const row = result.rows[0];
      return row ? { id: row.id, type: row.type, sourceUrl: row.source_url } : undefined;
    } catch {
      return undefined;
    }
  };
}

/** masterEndpoint + the stream path that remains after the configuration's sourceUrl (spec 4.2, DESIGN.md). */
export function ssaiPlaybackUrl(publicUrl: string, adinsert: AdinsertRef, streamUrl: string): string | undefined {
  // either type (live, broker) serves a live channel: the type names the service, not the kind of stream (issue 26)
  if (!streamUrl.startsWith(adinsert.sourceUrl)) return undefined;
  const rest = streamUrl.slice(adinsert.sourceUrl.length).replace(/^\/+/, '');
  return `${publicUrl}/v1/master/${adinsert.id}/${rest}`;
}

export async function channelView(ctx: EngineContext, workflow: Workflow) {
  const find = finder(ctx);
  const adServers = workflow.blueprint.settings?.adServers ?? [];
  const outputs = await Promise.all(
    workflow.channel.outputs.map(async (output) => {
      const entry = adServers.find((a) => a.destinationRefId === output.destinationId);
      const adinsert = entry ? await find(workflow.organizationId, entry.adServerId) : undefined;
      const ssai = adinsert ? ssaiPlaybackUrl(ctx.config.publicUrl, adinsert, output.url) : undefined;
      return { ...output, ...(ssai ? { ssaiPlaybackUrl: ssai, adServerId: adinsert?.id } : {}) };
    }),
  );
  return {
    workflowId: workflow.id,
    name: workflow.name,
    channelStatus: workflow.status,
    ...(workflow.statusReason ? { statusReason: workflow.statusReason } : {}),
    region: workflow.channel.region ?? workflow.region,
    startRequestedDateTime: iso(workflow.channel.startRequestedAt),
    startedDateTime: iso(workflow.channel.startedAt),
    stopRequestedDateTime: iso(workflow.channel.stopRequestedAt),
    stoppedDateTime: iso(workflow.channel.stoppedAt),
    inputs: workflow.channel.inputs,
    activeInput: workflow.channel.activeInput ?? null,
    outputs,
    archive: { status: workflow.channel.archiveStatus ?? 'NONE', url: workflow.channel.archiveUrl ?? null },
  };
}
