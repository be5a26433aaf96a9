import pg from 'pg';
import type { Logger } from '../logger.js';

/**
 * A dedicated connection LISTENing on one channel, reconnecting with backoff when the database
 * goes away. A notification is a hint to look now; callers also poll, so one missed while the
 * connection was down costs latency, never work.
 */
export class ChannelListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: { connectionString: string | undefined; channel: string; applicationName: string; log: Logger; onNotify: () => void },
  ) {}

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.connectionString, application_name: this.options.applicationName });
    client.on('notification', () => this.options.onNotify());
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (err) {
      this.options.log.warn({ err, channel: this.options.channel }, 'listener could not connect; retrying');
      await client.end().catch(() => {});
      this.retry();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = 250;
    // Whatever was notified while no one listened is looked for now.
    this.options.onNotify();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => {});
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 5_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
