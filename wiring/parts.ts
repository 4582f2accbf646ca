import type { EnginePart } from '../kernel/part.js';
import { foundationPart } from './foundation.part.js';
import { inputsPart } from './inputs.part.js';
import { vodPart } from './vod.part.js';
import { livePart } from './live.part.js';
import { ssaiPart } from './ssai.part.js';
import { packagerPart } from './packager.part.js';
import { channelCommandsPart } from './channel-commands.part.js';
import { brokerPart } from './broker.part.js';
import { linearPart } from './linear.part.js';
import { notificationsPart } from './notifications.part.js';
import { consolePart } from './console.mount.js';

/** Every part of the engine, in start order. A new capability adds one line here. */
export const ENGINE_PARTS: EnginePart[] = [
  foundationPart,
  inputsPart,
  livePart,
  vodPart,
  ssaiPart,
  packagerPart,
  channelCommandsPart,
  brokerPart,
  linearPart,
  notificationsPart,
  consolePart,
];
