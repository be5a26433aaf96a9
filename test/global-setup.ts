import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { startBoss } from '../src/jobs/boss.js';
import { createQueues } from '../src/jobs/registry.js';
import { createLogger } from '../src/logger.js';
import { ensureConsoleBuilt } from './helpers/console-build.js';
import { TEMPLATE_DB, withDatabaseName } from './helpers/names.js';
import { acquireTestPostgres } from './helpers/postgres.js';
import { ensureServerBuilt } from './helpers/server-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

interface Prepared {
  adminUrl: string;
  stop(): Promise<void>;
}

const shared = globalThis as { inboxTestPostgres?: { prepared: Promise<Prepared>; users: number } };

/**
 * Once per run: get a Postgres, build a template database with every migration and the
 * pg-boss schema and queues, then let each test file clone it (CREATE DATABASE … TEMPLATE).
 * The agent console and the service's dist/ are built alongside when their sources changed:
 * the processes tests start through bin/inbox.js then run compiled code, not tsx.
 *
 * Vitest calls a global setup once per project (its modules may be loaded once each), so the
 * Postgres and its template are kept on globalThis and stopped by the last project's teardown.
 */
export default async function setup(project: TestProject) {
  shared.inboxTestPostgres ??= { prepared: prepare(), users: 0 };
  const run = shared.inboxTestPostgres;
  run.users += 1;
  const { adminUrl, stop } = await run.prepared;
  project.provide('pgAdminUrl', adminUrl);
  return async () => {
    run.users -= 1;
    if (run.users > 0) return;
    delete shared.inboxTestPostgres;
    await stop();
  };
}

async function prepare(): Promise<Prepared> {
  // The browser tests of the agent console (test/console/) need its build.
  const consoleBuild = ensureConsoleBuilt().then(
    () => undefined,
    (err: unknown) => err,
  );
  const serverBuild = ensureServerBuilt();
  const postgres = await acquireTestPostgres();
  const admin = new pg.Client({ connectionString: postgres.adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();

  const templateUrl = withDatabaseName(postgres.adminUrl, TEMPLATE_DB);
  const database = createDatabase(templateUrl, { max: 2 });
  await migrateToLatest(database.db);
  await database.close();
  const boss = await startBoss(templateUrl, createLogger('silent'), { max: 2, supervise: false });
  await createQueues(boss);
  await boss.stop({ graceful: false, close: true });

  const buildFailed = await consoleBuild;
  if (buildFailed) throw buildFailed;
  const dist = await serverBuild;
  process.stderr.write(`[test postgres] ${postgres.source}, template ${TEMPLATE_DB} ready; dist/ ${dist}\n`);
  return { adminUrl: postgres.adminUrl, stop: () => postgres.stop() };
}
