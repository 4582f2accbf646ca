// The beacon thread's entry (ssai/serve/beacon-thread.ts): a worker thread does not inherit the parent's tsx loader,
// so it registers its own before loading the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./beacon-thread-body.ts');
