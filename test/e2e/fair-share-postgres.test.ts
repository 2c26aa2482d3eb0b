// See fair-share.ts: on PostgreSQL, two processes sharing the database (the flood through both).
import { testStores } from '../helpers/stores.ts';
import { fairShareSuite } from './fair-share.ts';

const postgres = (await testStores()).find((s) => s.name === 'postgres');
if (postgres) fairShareSuite(postgres, 2);
