// The ceiling of `npm run bench`: a Fastify route that does only what no ingestion can skip —
// read the exact raw body bytes and check their WhatsApp HMAC — and answers like the real
// route. Same Fastify, the same content-type parser as src/webhooks-in (bytes as a Buffer),
// the same HMAC and compare helpers; no database. Plain JavaScript on the compiled helpers
// (dist/, built by the bench first) and started without a TypeScript loader, so the ceiling is
// the server's and not a loader's.
import Fastify from 'fastify';
import { hmacSha256Hex, safeEqual } from '../../dist/src/crypto/hmac.js';

const secret = process.env.BENCH_SECRET ?? '';
const port = Number(process.env.PORT ?? 0);

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/webhooks/:integrationKey', async (request, reply) => {
  const header = request.headers['x-hub-signature-256'];
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const ok =
    typeof header === 'string' && header.startsWith('sha256=') && safeEqual(header.slice(7).toLowerCase(), hmacSha256Hex(secret, body));
  if (!ok) return reply.code(401).send({ error: { code: 'invalid_api_key', message: 'bad signature' } });
  return { status: 'queued' };
});
const url = await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`ceiling listening on ${url}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
