// See fair-share.ts: on SQLite, one process.
import { testStores } from '../helpers/stores.ts';
import { fairShareSuite } from './fair-share.ts';

const sqlite = (await testStores()).find((s) => s.name === 'sqlite');
if (sqlite) fairShareSuite(sqlite, 1);
