// `node bench/postgres-named.mjs [postgres-url]`: what a named statement saves on PostgreSQL, against the
// same text sent unnamed (what `pg` does unless a statement is named), on one connection. The query is the
// shape of a turn's read of a record with its tags. Prints the wall time and the client's CPU per query,
// for three rounds of each. The chat benchmark runs too many statements at once, on a shared machine, to
// show this one cost apart; this shows it alone (see src/store/postgres-named-statements.ts).
import pg from 'pg';

const url = process.argv[2] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const QUERIES = 10_000;
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query('create temp table records (id text primary key, bot_id text, payload text)');
await client.query('create temp table record_tags (resource_id text, key text, value text)');
await client.query(
  `insert into records select 'r' || i, 'bot', '{"text":"hello"}' from generate_series(0, 999) as i`,
);
const text = `select r.*, (select coalesce(json_agg(json_build_array(g.key, g.value)), '[]')::text
  from record_tags g where g.resource_id = r.id) as tag_pairs from records r where r.id = $1 and r.bot_id = $2`;

async function round(named) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < QUERIES; i++) {
    const values = [`r${i % 1000}`, 'bot'];
    await client.query(named ? { name: 'bench_named', text, values } : { text, values });
  }
  const used = process.cpuUsage(cpu);
  const wallUs = ((performance.now() - start) * 1000) / QUERIES;
  const cpuUs = (used.user + used.system) / QUERIES;
  process.stdout.write(
    `${named ? 'named  ' : 'unnamed'}: ${wallUs.toFixed(1)} µs per query, ${cpuUs.toFixed(1)} µs of client CPU\n`,
  );
}

for (let i = 0; i < 3; i++) {
  await round(false);
  await round(true);
}
await client.end();
