import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BOSS_SCHEMA } from '../../src/jobs/boss.js';
import { useTestContext } from '../helpers/app.js';

const ctx = await useTestContext({ workers: true });

describe('scheduled queues', () => {
  it('send their jobs with `{}` as data, as the handlers read it', async () => {
    // pg-boss's scheduler sends each slot's job with its schedule's data: null when the
    // schedule was made without, and the snooze sweep then failed on every slot.
    const { rows } = await sql<{ name: string; data: unknown }>`
      SELECT name, data FROM ${sql.table(`${BOSS_SCHEMA}.schedule`)} ORDER BY name`.execute(ctx.deps.db);
    expect(rows.map((r) => r.name)).toContain('thread-snooze');
    expect(rows.filter((r) => r.data === null || typeof r.data !== 'object').map((r) => r.name)).toEqual([]);
  });
});
