// The ceiling of `npm run bench`: a Fastify route that does only what no ingestion can skip —
// read the exact raw body and check its WhatsApp HMAC — and answers like the real route.
// Same Fastify, same raw-body plugin, same compare helper; no database.
import Fastify from 'fastify';
import rawBody from 'fastify-raw-body';
import { hmacSha256Hex, safeEqual } from '../src/crypto/hmac.js';

const secret = process.env.BENCH_SECRET ?? '';
const port = Number(process.env.PORT ?? 0);

const app = Fastify({ logger: false });
await app.register(rawBody, { global: false, runFirst: true, encoding: 'utf8' });
app.post('/webhooks/:integrationKey', { config: { rawBody: true } }, async (request, reply) => {
  const header = request.headers['x-hub-signature-256'];
  const body = request.rawBody as string;
  const ok = typeof header === 'string' && header.startsWith('sha256=') && safeEqual(header.slice(7), hmacSha256Hex(secret, body));
  if (!ok) return reply.code(401).send({ error: { code: 'invalid_api_key', message: 'bad signature' } });
  return { status: 'queued' };
});
const url = await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`ceiling listening on ${url}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
