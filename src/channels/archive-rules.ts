// Spec 3.3: what the createArchives flag does to the archive output groups of a blueprint's channel.
import type { Blueprint } from '../blueprints/blueprint.schema.js';
import type { ChannelSpec } from '../../kernel/seams/channel-runtime.js';

type OutputGroup = { outputGroupSettings?: Record<string, unknown> } & Record<string, unknown>;

function isArchiveGroup(group: OutputGroup): boolean {
  return typeof group.outputGroupSettings === 'object' && group.outputGroupSettings !== null && 'archiveGroupSettings' in group.outputGroupSettings;
}

/** The blueprint the runtime gets and the archive decision; the workflow's stored blueprint is left as it was. */
export function applyArchiveRules(blueprint: Blueprint): { blueprint: ChannelSpec['blueprint']; archive: ChannelSpec['archive'] } {
  const copy = structuredClone(blueprint) as Blueprint;
  const wanted = copy.createArchives === true;
  let hasGroups = false;
  for (const section of Object.values(copy.components)) {
    const settings = section.channel?.encoderSettings;
    if (!settings) continue;
    const groups = settings.outputGroups as OutputGroup[];
    hasGroups ||= groups.some(isArchiveGroup);
    if (!wanted) settings.outputGroups = groups.filter((group) => !isArchiveGroup(group));
  }
  return {
    blueprint: copy as unknown as ChannelSpec['blueprint'],
    // true + none: the runtime adds the default archive group writing to the default bucket
    archive: { enabled: wanted, defaultArchiveGroup: wanted && !hasGroups },
  };
}
