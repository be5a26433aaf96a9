// Opens the realtime socket and prints every event, one JSON line each.
//   node --import tsx scripts/realtime-listen.ts --url http://127.0.0.1:3000 --token <jwt or personal-access token>
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values } = parseArgs({ options: { url: { type: 'string', default: 'http://127.0.0.1:3000' }, token: { type: 'string' } } });
if (!values.token) {
  process.stderr.write('usage: realtime-listen --url http://127.0.0.1:3000 --token <jwt or personal-access token>\n');
  process.exit(64);
}
const url = `${values.url!.replace(/^http/, 'ws').replace(/\/$/, '')}/v1/realtime`;
const ws = new WebSocket(url, { headers: { authorization: `Bearer ${values.token}` } });
ws.on('open', () => process.stderr.write(`connected to ${url}\n`));
ws.on('message', (data) => process.stdout.write(`${String(data)}\n`));
ws.on('unexpected-response', (_req, res) => {
  process.stderr.write(`refused: HTTP ${res.statusCode}\n`);
  process.exit(1);
});
ws.on('close', (code, reason) => {
  process.stderr.write(`closed: ${code} ${String(reason)}\n`);
  process.exit(code === 4001 ? 0 : 1);
});
ws.on('error', (err) => {
  process.stderr.write(`error: ${err.message}\n`);
  process.exit(1);
});
