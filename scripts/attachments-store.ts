// `node --import tsx scripts/attachments-store.ts [-- --help]`: the attachment store itself,
// without HTTP, on a PostgreSQL of its own (or DATABASE_URL): how fast one 25 MB file goes in
// and comes out, and how much memory the process holds while --concurrent such transfers run
// at once (live Buffer bytes after a full collection, and RSS). The figures the bench's
// attachments phase reports through the service are bounded by these.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { postgresStorage } from '../src/attachments/postgres-storage.js';
import { createDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { parseOptions } from './cli-options.js';

const v = parseOptions(
  'node --import tsx scripts/attachments-store.ts',
  'Measures the postgres attachment store alone: MB/s in and out for one file, then memory while several transfers run at once.',
  {
    mb: { type: 'string', default: '25', help: 'size of each file in MB' },
    concurrent: { type: 'string', default: '10', help: 'transfers at once in the memory phase' },
    pool: { type: 'string', default: '10', help: "connections in the store's pool (the service's default is 10)" },
  },
);
const MB = 1024 * 1024;
const size = Number(v.mb) * MB;
const out = (line: string) => process.stdout.write(`${line}\n`);

v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;
const live = () => {
  collect();
  return process.memoryUsage().arrayBuffers;
};
const rss = () => process.memoryUsage().rss;

// One random MB repeated: the source costs no CPU and holds 1 MB however large the file.
const block = randomBytes(MB);
async function* source(bytes: number) {
  for (let sent = 0; sent < bytes; sent += 64 * 1024) yield block.subarray(sent % MB, (sent % MB) + Math.min(64 * 1024, bytes - sent));
}

async function main() {
  let stop = async () => {};
  let url = process.env.DATABASE_URL;
  if (url === undefined) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-store-'));
    const pg = await startEmbeddedPostgres(dir);
    url = pg.url;
    stop = async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const database = createDatabase(url, { max: Number(v.pool) });
  try {
    await migrateToLatest(database.db);
    const store = postgresStorage(database.db);
    const run = randomBytes(4).toString('hex');

    // Warm the pool and the plan cache, so the first figure is not the connections' cost.
    await store.put(`${run}-warm`, source(4 * MB), { maxBytes: size });
    for await (const _ of (await store.get(`${run}-warm`))!);

    const cpuMsPerMb = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return ((used.user + used.system) / 1000 / (size / MB)).toFixed(1);
    };
    let t = performance.now();
    let cpu = process.cpuUsage();
    await store.put(`${run}-one`, source(size), { maxBytes: size });
    const putMbs = size / MB / ((performance.now() - t) / 1000);
    const putCpu = cpuMsPerMb(cpu);
    t = performance.now();
    cpu = process.cpuUsage();
    const hash = createHash('sha256');
    let got = 0;
    for await (const part of (await store.get(`${run}-one`))!) {
      got += part.byteLength;
      hash.update(part);
    }
    const getMbs = size / MB / ((performance.now() - t) / 1000);
    const getCpu = cpuMsPerMb(cpu);
    if (got !== size) throw new Error(`read ${got} bytes of ${size}`);
    // CPU per MB is this process's own share, steadier than MB/s on a machine others share.
    out(
      `one ${v.mb} MB file: put ${putMbs.toFixed(0)} MB/s (${putCpu} ms CPU/MB here), get ${getMbs.toFixed(0)} MB/s (${getCpu} ms CPU/MB here)`,
    );

    const n = Number(v.concurrent);
    for (const what of ['put', 'get'] as const) {
      const liveBefore = live();
      const rssBefore = rss();
      let livePeak = 0;
      let rssPeak = 0;
      const sample = setInterval(() => {
        livePeak = Math.max(livePeak, live() - liveBefore);
        rssPeak = Math.max(rssPeak, rss() - rssBefore);
      }, 50);
      t = performance.now();
      await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          if (what === 'put') return store.put(`${run}-many-${i}`, source(size), { maxBytes: size });
          for await (const _part of (await store.get(`${run}-many-${i}`))!);
        }),
      );
      clearInterval(sample);
      const mbs = (n * size) / MB / ((performance.now() - t) / 1000);
      // Sampling collects garbage every 50 ms, which slows these transfers: their MB/s is not the store's.
      out(
        `${n} ${what}s at once: ${mbs.toFixed(0)} MB/s in all (slowed by the sampling); live buffers +${(livePeak / MB).toFixed(1)} MB, RSS +${(rssPeak / MB).toFixed(1)} MB at most`,
      );
    }
  } finally {
    await database.close();
    await stop();
  }
}

await main();
