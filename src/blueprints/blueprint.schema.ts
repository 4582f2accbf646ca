// The shape of a blueprint (spec 2.1); unknown encoder keys pass through because they mirror the encoder's own request.
import { z } from 'zod';

export const INPUT_PROTOCOLS = ['SRT_PUSH', 'RIST', 'RTP', 'RTP_FEC', 'RTMP_PUSH', 'RTMP_PULL', 'URL_PULL', 'MP4'] as const;
export type InputProtocol = (typeof INPUT_PROTOCOLS)[number];

export const adServerSchema = z.object({
  destinationRefId: z.string().min(1).max(256),
  adServerId: z.string().min(1).max(256),
});

const blueprintInputSchema = z
  .looseObject({
    name: z.string().min(1).max(128),
    type: z.enum(INPUT_PROTOCOLS).optional(),
    managedInputId: z.string().min(1).max(64).optional(),
    destinations: z.array(z.looseObject({ streamName: z.string() })).optional(),
    inputSecurityGroups: z.array(z.string()).optional(),
  })
  .refine((input) => input.type !== undefined || input.managedInputId !== undefined, 'an input needs a type or a managedInputId');

const destinationSchema = z.looseObject({
  id: z.string().min(1).max(128),
  settings: z.array(z.looseObject({ streamName: z.string().optional(), url: z.string().optional() })),
});

const channelSchema = z.looseObject({
  channelClass: z.enum(['SINGLE_PIPELINE', 'STANDARD']),
  name: z.string().min(1).max(128),
  destinations: z.array(destinationSchema).min(1),
  encoderSettings: z.looseObject({
    audioDescriptions: z.array(z.unknown()),
    captionDescriptions: z.array(z.unknown()).optional(),
    outputGroups: z.array(z.looseObject({ name: z.string().optional() })).min(1),
    timecodeConfig: z.unknown().optional(),
    videoDescriptions: z.array(z.unknown()),
  }),
  inputSpecification: z.looseObject({ codec: z.string(), maximumBitrate: z.string(), resolution: z.string() }).optional(),
  logLevel: z.string().optional(),
  tags: z.record(z.string(), z.string()).optional(),
});

/** One encoder section: its input, and the channel settings (one section of a multi-input blueprint holds the channel). */
const sectionSchema = z.looseObject({ input: blueprintInputSchema, channel: channelSchema.optional() });

export const blueprintSchema = z
  .looseObject({
    id: z.string().max(128).optional(),
    name: z.string().max(256).optional(),
    description: z.string().max(2048).optional(),
    components: z.record(z.string().min(1).max(64), sectionSchema),
    createStateMachineArn: z.string().optional(),
    deleteStateMachineArn: z.string().optional(),
    deprecated: z.boolean().optional(),
    created: z.number().int().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    settings: z.looseObject({ adServers: z.array(adServerSchema).max(16).optional() }).optional(),
    createArchives: z.boolean().optional(),
    createRawArchive: z.boolean().optional(),
  })
  .superRefine((blueprint, issue) => {
    const sections = Object.values(blueprint.components);
    if (sections.length === 0) issue.addIssue({ code: 'custom', path: ['components'], message: 'a blueprint needs at least one encoder section' });
    else if (sections.filter((section) => section.channel !== undefined).length !== 1) {
      issue.addIssue({ code: 'custom', path: ['components'], message: 'exactly one encoder section holds the channel' });
    }
    const destinationIds = new Set(sections.flatMap((section) => section.channel?.destinations.map((d) => d.id) ?? []));
    blueprint.settings?.adServers?.forEach((entry, index) => {
      if (!destinationIds.has(entry.destinationRefId)) {
        issue.addIssue({ code: 'custom', path: ['settings', 'adServers', index, 'destinationRefId'], message: `no destination with id ${entry.destinationRefId}` });
      }
    });
  });

export type Blueprint = z.output<typeof blueprintSchema>;
export type BlueprintSection = Blueprint['components'][string];
export type BlueprintChannel = NonNullable<BlueprintSection['channel']>;

/** The catalog entry: a blueprint with every field of 2.1 present. */
export type CatalogBlueprint = Blueprint & {
  id: string; name: string; description: string; featured: boolean; tags: string[]; created: number;
};

/** The section holding the channel settings (validated to exist exactly once). */
export function channelSection(blueprint: Blueprint): { key: string; channel: BlueprintChannel } | undefined {
  for (const [key, section] of Object.entries(blueprint.components)) if (section.channel) return { key, channel: section.channel };
  return undefined;
}

/** Every input of a blueprint, in section order; the first is the active one at start. */
export function blueprintInputs(blueprint: Blueprint): Array<{ section: string; name: string; type?: InputProtocol; managedInputId?: string }> {
  return Object.entries(blueprint.components).map(([section, { input }]) => ({
    section,
    name: input.name,
    ...(input.type ? { type: input.type } : {}),
    ...(input.managedInputId ? { managedInputId: input.managedInputId } : {}),
  }));
}
