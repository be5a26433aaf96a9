// `node --import tsx scripts/bench/mailbox.ts [--mails 1000] [--kb 50]`: a fresh mailbox of
// --mails mails of about --kb KB each (hoodiecrow-imap on loopback) is connected as an
// `email.imap` connection; one worker process as `--role worker` runs it (its mailbox reader and
// its queue workers, on an embedded Postgres with default durability) reads and processes it.
// Reports the time from the first mail read to the last one a message, and mails/s.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startImapServer } from '../../harness/imap.js';
import { createStorage } from '../../src/attachments/storage-factory.js';
import { loadConfig } from '../../src/config.js';
import { createConnection } from '../../src/connections/connections.service.js';
import { createDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Deps } from '../../src/deps.js';
import { startBoss } from '../../src/jobs/boss.js';
import { createQueues, startWorkers } from '../../src/jobs/registry.js';
import { visitorBus } from '../../src/livechat/visitor-events.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';

const { values } = parseArgs({ options: { mails: { type: 'string', default: '1000' }, kb: { type: 'string', default: '50' } } });
const count = Number(values.mails);
const kb = Number(values.kb);
const out = (line: string) => process.stdout.write(`${line}\n`);

/** A plain mail of about `kb` KB: text lines, as a long support mail with its quoted history is. */
function mail(i: number): string {
  const line = `Line of the mail body number ${i}, long enough to be a realistic line of text.`;
  const body = Array.from({ length: Math.ceil((kb * 1024) / (line.length + 2)) }, () => line).join('\r\n');
  return [
    `From: Customer ${i} <customer${i % 200}@bench.test>`,
    'To: support@mailbox.test',
    `Subject: Question ${i}`,
    `Message-ID: <bench-${i}@bench.test>`,
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-bench-mailbox-'));
const pg = await startEmbeddedPostgres(dir);
const imap = await startImapServer({ initial: Array.from({ length: count }, (_, i) => mail(i)) });
const secretKey = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const config = loadConfig({ INBOX_SECRET_KEY: secretKey, INBOX_ALLOW_PRIVATE_SMTP: 'true', LOG_LEVEL: 'warn' });
const log = createLogger(config.logLevel);
const database = createDatabase(pg.url, { max: config.dbPoolMax });
try {
  await migrateToLatest(database.db);
  const boss = await startBoss(pg.url, log, { max: config.queuePoolMax });
  await createQueues(boss);
  const deps: Deps = {
    config,
    log,
    db: database.db,
    pool: database.pool,
    boss,
    metrics: createMetrics(),
    jwtSecret: 'bench-jwt-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    secretKey: Buffer.from(secretKey, 'hex'),
    storage: await createStorage(config, database.db),
    visitors: visitorBus(database.db),
    now: () => new Date(),
  };
  const workspace = await createWorkspace(database.db, 'Bench');
  await createConnection(
    deps,
    workspace.id,
    {
      integrationKey: 'email.imap',
      externalAccountId: imap.user,
      name: 'Bench mailbox',
      credentials: { imapUrl: imap.url, smtpUrl: 'smtp://127.0.0.1:1', username: imap.user, password: imap.pass },
    },
    'workspace',
  );
  const started = performance.now();
  const workers = await startWorkers(deps, { mailboxes: { scanMs: 50 } });
  let firstStoredAt: number | undefined;
  let allStoredAt: number | undefined;
  for (;;) {
    const { stored, messages } = await database.db
      .selectNoFrom((eb) => [
        eb.selectFrom('imap_messages').select(eb.fn.countAll<string>().as('n')).as('stored'),
        eb.selectFrom('messages').select(eb.fn.countAll<string>().as('n')).as('messages'),
      ])
      .executeTakeFirstOrThrow();
    if (firstStoredAt === undefined && Number(stored) > 0) firstStoredAt = performance.now();
    if (allStoredAt === undefined && Number(stored) >= count) allStoredAt = performance.now();
    if (Number(messages) >= count) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const done = performance.now();
  await workers.stop();
  await boss.stop({ graceful: false, close: true });
  const seconds = (done - started) / 1000;
  out(`mailbox bench: ${count} mails of ~${kb} KB, fresh mailbox, one worker process (reader + queue workers)`);
  out(`  start → every mail a message: ${seconds.toFixed(1)} s (${(count / seconds).toFixed(0)} mails/s)`);
  if (allStoredAt !== undefined)
    out(`  start → every mail stored (read, parsed, committed): ${((allStoredAt - started) / 1000).toFixed(1)} s`);
  if (firstStoredAt !== undefined) out(`  first mail stored → every mail a message: ${((done - firstStoredAt) / 1000).toFixed(1)} s`);
} finally {
  await database.close();
  await imap.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
