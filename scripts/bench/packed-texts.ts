// What it costs to send a batch's texts to PostgreSQL three ways: as elements of a JSON array
// (json_array_elements), of a text[] (unnest), and packed into one bytea sliced by offsets
// (src/db/packed-texts.ts, what the delivery path sends). Each way inserts the same event-log
// rows (webhook_events, the worker's largest texts: about 1.2 KB of JSON each, quotes included).
//
//   node --import tsx scripts/bench/packed-texts.ts [--rows 500] [--batches 20] [--passes 5]
//
// Prints, per row and for each way, the median of the passes: the backend's CPU, and the round
// trip as the client sees it (building the parameter included). Ways alternate within a pass.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { arrayLiteral } from '../../src/db/array-literal.js';
import { createDatabase, type Executor } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { packedParams, unpacked, withPackedTexts } from '../../src/db/packed-texts.js';
import { processCpuMs } from './cpu.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '500' },
    batches: { type: 'string', default: '20' },
    passes: { type: 'string', default: '5' },
  },
});
const ROWS = Number(values.rows);
const BATCHES = Number(values.batches);
const PASSES = Number(values.passes);
const TEXT = 'Hello, I would like to know where my "order" is. '.repeat(20);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function body(i: number): string {
  return JSON.stringify({
    id: `evt_${i}`,
    type: 'message.created',
    createdAt: new Date().toISOString(),
    data: { message: { id: `msg_${i}`, threadId: 'thr_1', direction: 'inbound', status: 'received', text: TEXT } },
  });
}

type Way = (db: Executor, workspaceId: number, ids: string[], bodies: string[]) => Promise<unknown>;

const WAYS: Record<string, Way> = {
  'JSON array': (db, w, ids, bodies) =>
    sql`
    INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
    SELECT i, ${w}, 'message.created', b::text, now()
    FROM ROWS FROM (unnest(${arrayLiteral(ids)}::uuid[]), json_array_elements(${`[${bodies.join(',')}]`}::json)) WITH ORDINALITY AS v(i, b, n)
    ORDER BY n`.execute(db),
  'text[]': (db, w, ids, bodies) =>
    sql`
    INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
    SELECT i, ${w}, 'message.created', b, now()
    FROM unnest(${arrayLiteral(ids)}::uuid[], ${arrayLiteral(bodies)}::text[]) WITH ORDINALITY AS v(i, b, n)
    ORDER BY n`.execute(db),
  packed: (db, w, ids, bodies) =>
    withPackedTexts(bodies, (packed) => {
      const { bytes, starts, lengths } = packedParams(packed);
      return sql`
        INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
        SELECT i, ${w}, 'message.created', ${unpacked(bytes, 's', 'l')}, now()
        FROM unnest(${arrayLiteral(ids)}::uuid[], ${starts}, ${lengths}) WITH ORDINALITY AS v(i, s, l, n)
        ORDER BY n`.execute(db);
    }),
};

const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-packed-texts-'));
const pg = await startEmbeddedPostgres(dir);
const database = createDatabase(pg.url, { max: 1 });
try {
  await migrateToLatest(database.db);
  const { rows: ws } = await sql<{ id: number }>`INSERT INTO workspaces (name, app_id) VALUES ('Bench', 'app_bench') RETURNING id`.execute(
    database.db,
  );
  const workspaceId = ws[0]!.id;
  const results = new Map<string, { cpu: number[]; trip: number[] }>(Object.keys(WAYS).map((k) => [k, { cpu: [], trip: [] }]));
  await database.db.connection().execute(async (conn) => {
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn);
    const pid = rows[0]!.pid;
    for (let pass = 0; pass < PASSES + 1; pass++) {
      for (const [name, way] of Object.entries(WAYS)) {
        const cpuBefore = processCpuMs(pid);
        let tripNs = 0n;
        for (let b = 0; b < BATCHES; b++) {
          const ids = Array.from({ length: ROWS }, () => uuid7());
          const bodies = ids.map((_, i) => body(i));
          const started = process.hrtime.bigint();
          await way(conn, workspaceId, ids, bodies);
          tripNs += process.hrtime.bigint() - started;
        }
        // The first pass warms the statements and the table up, and is not counted.
        if (pass === 0) continue;
        const r = results.get(name)!;
        r.cpu.push(((processCpuMs(pid) - cpuBefore) * 1000) / (ROWS * BATCHES));
        r.trip.push(Number(tripNs) / 1000 / (ROWS * BATCHES));
      }
    }
  });
  console.log(`${ROWS} rows a statement, ${BATCHES} statements a pass, median of ${PASSES} passes, per row:`);
  for (const [name, r] of results) {
    console.log(`  ${name.padEnd(10)} backend CPU ${median(r.cpu).toFixed(1)} µs, round trip ${median(r.trip).toFixed(1)} µs`);
  }
} finally {
  await database.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
