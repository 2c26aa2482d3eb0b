// The entry of the document parser's worker thread: worker threads do not inherit the main thread's
// TypeScript loader, so this plain module registers it before loading the parser.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
