#!/usr/bin/env node
// The `engine` command: TypeScript sources run through tsx's loader, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
await import('../wiring/cli.ts');
