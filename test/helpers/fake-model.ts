import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModelCall {
  headers: IncomingHttpHeaders;
  body: { model: string; messages: { role: string; content: string }[]; stream?: boolean; max_tokens?: number };
}

export type ModelBehaviour = { answer: string; stream?: boolean } | { status: number; body: string; contentType?: string } | 'hang';

/**
 * An OpenAI-compatible server on loopback (`POST /v1/chat/completions`), as Ollama, vLLM or
 * OpenAI answer it: one JSON completion, or server-sent `chat.completion.chunk`s ending in
 * `[DONE]`. Records every call with its parsed body.
 */
export async function startFakeModel() {
  const calls: ModelCall[] = [];
  let behaviour: ModelBehaviour = { answer: 'Hello from the model.' };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      calls.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const b = behaviour;
      if (b === 'hang') return;
      if ('status' in b) {
        res.writeHead(b.status, { 'content-type': b.contentType ?? 'application/json' }).end(b.body);
        return;
      }
      if (!b.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: b.answer }, finish_reason: 'stop' }],
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Words as separate events, the way a model streams tokens.
      for (const piece of b.answer.match(/\S+\s*/g) ?? []) {
        res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    calls,
    behave(next: ModelBehaviour) {
      behaviour = next;
    },
    /** The whole prompt of a call, every message's content joined. */
    prompt(call: ModelCall | undefined = calls[calls.length - 1]) {
      return (call?.body.messages ?? []).map((m) => m.content).join('\n');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
