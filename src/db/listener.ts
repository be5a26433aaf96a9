import pg from 'pg';
import type { Deps } from '../deps.js';

export interface ListenerHandlers {
  /** A NOTIFY's payload on the channel. */
  notification(payload: string | undefined): void;
  /**
   * The listener is (again) listening. Whatever was published while it was down is lost:
   * this is where a hub catches up (asks the database, or has its sockets reconnect).
   * `first` is true for the first connection of this listener.
   */
  connected(first: boolean): Promise<void> | void;
}

/**
 * One dedicated Postgres connection LISTENing on one channel, reconnected with a backoff
 * (250 ms doubling to 10 s) whenever it is lost, for as long as the listener is open. Each
 * hub of an api process (the tenant bus, the live chat visitors) owns one; any number of
 * api processes can listen to the same channel.
 */
export class PgListener {
  private client: pg.Client | undefined;
  private closed = false;
  private connectedOnce = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: Pick<Deps, 'pool' | 'log'>,
    private readonly channel: string,
    /** Names the connection in pg_stat_activity (and in log lines). */
    private readonly applicationName: string,
    private readonly handlers: ListenerHandlers,
  ) {}

  /** Connects; when the database is away, keeps retrying in the background. */
  start(): Promise<void> {
    return this.tryConnect();
  }

  private async tryConnect(): Promise<void> {
    if (this.closed) return;
    try {
      await this.connect();
    } catch (err) {
      this.deps.log.warn({ err, listener: this.applicationName }, 'listener could not connect; retrying');
      this.schedule();
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.deps.pool.options.connectionString, application_name: this.applicationName });
    client.on('notification', (msg) => this.handlers.notification(msg.payload));
    client.on('error', (err) => {
      this.deps.log.warn({ err, listener: this.applicationName }, 'listener lost its connection');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = 250;
    const first = !this.connectedOnce;
    this.connectedOnce = true;
    // Listening again first, then catching up, misses nothing.
    await this.handlers.connected(first);
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tryConnect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.client?.end().catch(() => {});
  }
}
