// A mailbox reader in a process of its own, for the takeover test (imap-reader.test.ts): it
// reads the mailboxes of INBOX_TEST_DATABASE_URL and, inside its second batch's transaction,
// says "mid-batch" and hangs there until the test kills it.
import { createStorage } from '../../src/attachments/storage-factory.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase } from '../../src/db/database.js';
import type { Deps } from '../../src/deps.js';
import { startBoss } from '../../src/jobs/boss.js';
import { visitorBus } from '../../src/livechat/visitor-events.js';
import { createLogger } from '../../src/logger.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { createMetrics } from '../../src/metrics.js';

const url = process.env.INBOX_TEST_DATABASE_URL!;
const config = loadConfig({
  INBOX_ADMIN_API_KEY: 'test-admin-key-0123456789abcdef-0123456789',
  INBOX_JWT_SECRET: 'test-jwt-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  INBOX_SECRET_KEY: process.env.INBOX_SECRET_KEY!,
  INBOX_ALLOW_PRIVATE_SMTP: 'true',
  LOG_LEVEL: 'silent',
});
const log = createLogger(config.logLevel);
const { db, pool } = createDatabase(url, { max: 3 });
const boss = await startBoss(url, log, { max: 2, supervise: false, schedule: false, migrate: false });
const deps: Deps = {
  config,
  log,
  db,
  pool,
  boss,
  metrics: createMetrics(),
  jwtSecret: 'unused',
  secretKey: Buffer.from(process.env.INBOX_SECRET_KEY!, 'hex'),
  storage: await createStorage(config, db),
  visitors: visitorBus(db),
  now: () => new Date(),
};
let batches = 0;
const readers = new MailboxReaders(deps, {
  scanMs: 100,
  batchSize: Number(process.env.BATCH_SIZE ?? 5),
  async beforeCommit() {
    batches++;
    if (batches < 2) return;
    process.stdout.write('mid-batch\n');
    await new Promise(() => {});
  },
});
readers.start();
setInterval(() => {}, 60_000);
