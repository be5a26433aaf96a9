// Phase 5: agents' reply POSTs to the threads phase 3 made (each its own durable commit), then
// --sends queued replies sent by one role-all process through a loopback fake WhatsApp Cloud
// API, timed from the first sent to the last. Both run twice: free-text replies, then
// template replies (validated against the connection's synced template by the route, sent
// as `type: "template"` by the same batched sender).
import autocannon from 'autocannon';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { childrenOf } from '../../harness/service.js';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import type { Db } from '../../src/db/database.js';
import { startBoss } from '../../src/jobs/boss.js';
import { jobsIn } from '../../src/jobs/queue.js';
import { createLogger } from '../../src/logger.js';
import { SEND_QUEUE } from '../../src/replies/send-message.enqueue.js';
import {
  insertQueuedReplies,
  lastMessageId,
  postmasterPid,
  type QueuedTemplate,
  queuedReplies,
  seedTemplate,
  sentReplies,
  threadIds,
} from './bench.queries.js';
import { cpuShare, say, serve, waitFor } from './common.js';
import { postgresCpuMs, processCpuMs } from './cpu.js';
import type { BenchOptions } from './options.js';

/** How long each kind of reply is POSTed: whole seconds of autocannon's, counted by answers. */
const POST_SECONDS = 6;

const TEMPLATE = { name: 'order_update', body: 'Hi {{1}}, your order {{2}} has shipped.' };
const QUEUED_TEMPLATE: QueuedTemplate = {
  text: 'Hi Ann, your order #42 has shipped.',
  template: {
    name: TEMPLATE.name,
    language: { code: 'en_US' },
    components: [
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ann' },
          { type: 'text', text: '#42' },
        ],
      },
    ],
  },
};

export async function measureSend(options: BenchOptions, databaseUrl: string, db: Db, workspaceId: number, connectionId: number) {
  say(`5 send: ${options.sends} replies, then as many template replies, through a loopback fake WhatsApp Cloud API, one role-all process`);
  const fake = await startFakeProviders();
  const key = await issueApiKey(db, workspaceId, 'bench', ['write']);
  const threads = await threadIds(db, 500);
  await seedTemplate(db, connectionId, TEMPLATE);
  const sender = await serve(options, 'all', databaseUrl, { whatsappApiBaseUrl: fake.baseUrls.whatsapp });
  const postmaster = await postmasterPid(db);
  // The service's CPU: role all's process and the worker process it starts.
  const serviceCpuMs = () => childrenOf(sender.child.pid).reduce((ms, pid) => ms + processCpuMs(pid), processCpuMs(sender.child.pid));

  // a. The route: agents' POSTs for POST_SECONDS, each its own durable commit. The bodies are
  // small and unsigned, so they are made as they are sent.
  const post = async (body: (n: number) => object) => {
    let next = 0;
    const share = cpuShare();
    const [service0, pg0] = [serviceCpuMs(), postgresCpuMs(postmaster)];
    const posted = await autocannon({
      url: sender.url,
      connections: 20,
      duration: POST_SECONDS,
      requests: [
        {
          method: 'POST',
          setupRequest: (req: Record<string, unknown>) => ({
            ...req,
            path: `/v1/threads/${threads[next++ % threads.length]}/messages`,
            body: JSON.stringify(body(next)),
            headers: { 'content-type': 'application/json', 'x-api-key': key.key },
          }),
        } as unknown as autocannon.Request,
      ],
    });
    const postGeneratorCpu = share();
    // The CPU of answering the POSTs and of sending what they queued, which the worker does
    // meanwhile: a reply's whole cost.
    await waitFor('the posted replies to be sent', async () => (await queuedReplies(db)) === 0, 300_000, 100);
    const perPost = (ms: number) => Math.round((ms * 1000) / Math.max(posted['2xx'], 1));
    return {
      posted: posted['2xx'],
      postNon2xx: posted.non2xx,
      postRps: Math.round(posted['2xx'] / POST_SECONDS),
      postServiceCpuUs: perPost(serviceCpuMs() - service0),
      postPostgresCpuUs: perPost(postgresCpuMs(postmaster) - pg0),
      postP99Ms: posted.latency.p99,
      postGeneratorCpu,
    };
  };
  // b. The sender: a backlog of queued replies (written in one transaction, as a burst of
  // agents would leave it) drained by the worker, first sent to last sent.
  const drain = async (template?: QueuedTemplate) => {
    const marker = await lastMessageId(db);
    const boss = await startBoss(databaseUrl, createLogger('warn'), { max: 2, supervise: false });
    await db.transaction().execute(async (trx) => {
      const ids = await insertQueuedReplies(trx, options.sends, threads.length, template);
      await boss.insert(
        SEND_QUEUE,
        ids.map((messageId) => ({ data: { messageId, attempt: 1 } })),
        { db: jobsIn(trx) },
      );
    });
    await boss.stop({ graceful: false, close: true });
    await waitFor('the queued replies to be sent', async () => (await queuedReplies(db)) === 0, 300_000);
    const { sent, seconds } = await sentReplies(db, marker);
    return { sent, seconds: Number(seconds.toFixed(2)), sendsPerSec: Math.round(sent / seconds) };
  };
  try {
    const textPosts = await post((n) => ({ text: `Reply ${n}: thanks, your order is on its way.` }));
    const text = await drain();
    const textRequests = fake.requests.length;
    const templatePosts = await post((n) => ({
      template: { name: TEMPLATE.name, language: 'en_US', parameters: { body: ['Ann', `#${n}`] } },
    }));
    const template = await drain(QUEUED_TEMPLATE);
    // The fake refuses a template send whose JSON is not Cloud API's: count what it took.
    const templatesAccepted = fake.requests.slice(textRequests).filter((r) => r.response?.status === 200).length;
    return {
      ...textPosts,
      ...text,
      template: { ...templatePosts, ...template, providerAccepted: templatesAccepted },
      providerRequests: fake.requests.length,
      rssMb: sender.peakRssMb(),
    };
  } finally {
    await sender.stop();
    await fake.close();
  }
}
