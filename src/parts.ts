import type { EnginePart } from './part.js';
import { foundationPart } from './foundation.part.js';

/** Every part of the engine, in start order. A new capability adds one line here. */
export const ENGINE_PARTS: EnginePart[] = [foundationPart];
