// The Tables API's limits: what its schemas bound (schemas.ts) and the domain checks.

/** Most tables one bot has. */
export const MAX_TABLES_PER_BOT = 500;

/** Table names: a letter or `_`, then letters, digits and `_` (the hosted product's rule), at most this long. */
export const MAX_TABLE_NAME = 50;

/** Most columns a table has. */
export const MAX_COLUMNS = 20;

/** Longest column name. */
export const MAX_COLUMN_NAME = 30;

/** Row size: this many bytes (of the row's JSON) times the table's factor. */
export const ROW_BYTES_PER_FACTOR = 4 * 1024;

/** The largest factor of a table. */
export const MAX_FACTOR = 30;

/** Most rows one write call takes, and most ids one delete names. */
export const MAX_ROWS_PER_CALL = 1000;

/** Rows a find answers when it asks for no `limit`, and the most it may ask for. */
export const FIND_LIMIT_DEFAULT = 100;
export const FIND_LIMIT_MAX = 1000;
