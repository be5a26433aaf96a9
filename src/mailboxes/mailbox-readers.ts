import type { ImapFlow, MailboxObject } from 'imapflow';
import type pg from 'pg';
import { imapMaxMessageBytes, readImapMail } from '../channels/email-imap.js';
import { CREDENTIALS_DO_NOT_OPEN, connectionCredentials, NO_CREDENTIALS } from '../connections/connection-credentials.js';
import { recordAccountHealth } from '../connections/connection-health.queries.js';
import { SecretBoxError } from '../crypto/secret-box.js';
import { tryLockKeyForSession, unlockKeyForSession } from '../db/advisory-locks.js';
import type { Deps } from '../deps.js';
import { openFolder, openImap } from '../net/imap.js';
import { type FetchedMail, findMailboxState, listMailboxes, type MailboxRow, storeMails } from './mailboxes.queries.js';

export interface MailboxReaderOptions {
  /** How often a folder is read whatever IDLE says (servers without IDLE, a lost notification). */
  pollMs?: number;
  /** How often a process looks for mailboxes nobody holds (a crashed holder's): takeover within this. */
  scanMs?: number;
  /** The most mails, and bytes, stored in one transaction. */
  batchSize?: number;
  batchBytes?: number;
  /** Called inside each batch's transaction just before its commit (tests crash a reader there). */
  beforeCommit?: (mailboxId: number) => Promise<void>;
}

const DEFAULTS = { pollMs: 60_000, scanMs: 15_000, batchSize: 100, batchBytes: 16 * 1024 * 1024 };
/** Each wait of an IMAP login or command. */
const IMAP_TIMEOUT_MS = 30_000;
const MAX_BACKOFF_MS = 60_000;

/**
 * Reads the `email.imap` mailboxes (docs/email.md, "Mailboxes"). One process at a time holds
 * each mailbox: a session-level Postgres advisory lock taken on a connection this object
 * keeps for as long as it holds any. When the process dies its connection closes and
 * Postgres lets the locks go; another process's next scan (every `scanMs`) takes them over.
 */
export class MailboxReaders {
  private readonly options: typeof DEFAULTS & Pick<MailboxReaderOptions, 'beforeCommit'>;
  private readonly readers = new Map<number, MailboxReader>();
  private lockClient: pg.PoolClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly deps: Deps,
    options: MailboxReaderOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    this.schedule(0);
  }

  /** The mailboxes (connection ids) this process reads now. */
  held(): number[] {
    return [...this.readers.keys()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.scanning;
    await this.dropAll();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.scanning = this.scan().finally(() => {
        this.scanning = undefined;
        this.schedule(this.options.scanMs);
      });
    }, ms);
    this.timer.unref();
  }

  private async scan(): Promise<void> {
    try {
      const boxes = await listMailboxes(this.deps.db);
      const wanted = new Map(boxes.map((b) => [b.id, b]));
      for (const [id, reader] of this.readers) {
        if (wanted.get(id)?.version === reader.mailbox.version) continue;
        // Deleted, or its credentials or folder changed: let go (and take it again below).
        this.readers.delete(id);
        await reader.stop();
        if (this.lockClient) await unlockKeyForSession(this.lockClient, lockName(id));
      }
      for (const box of boxes) {
        if (this.stopped || this.readers.has(box.id)) continue;
        const client = await this.locks();
        if (!(await tryLockKeyForSession(client, lockName(box.id)))) continue;
        const reader = new MailboxReader(this.deps, box, this.options);
        this.readers.set(box.id, reader);
        reader.start();
        this.deps.log.info({ connectionId: box.id }, 'reading the mailbox');
      }
      if (this.readers.size === 0) this.releaseLocks();
    } catch (err) {
      this.deps.log.warn({ err }, 'looking for mailboxes to read failed');
    }
  }

  /** The connection the locks live on, opened when the first mailbox is taken. */
  private async locks(): Promise<pg.PoolClient> {
    if (this.lockClient) return this.lockClient;
    const client = await this.deps.pool.connect();
    // Its loss is the loss of every lock on it: another process may be reading already.
    client.on('error', (err) => {
      this.deps.log.warn({ err }, 'the connection holding the mailboxes was lost; letting them go');
      if (this.lockClient === client) this.lockClient = undefined;
      client.release(err);
      void this.stopReaders();
    });
    this.lockClient = client;
    return client;
  }

  private async stopReaders(): Promise<void> {
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((r) => r.stop()));
  }

  /** Closing the connection lets every lock on it go at once. */
  private releaseLocks(): void {
    const client = this.lockClient;
    this.lockClient = undefined;
    client?.release(true);
  }

  private async dropAll(): Promise<void> {
    await this.stopReaders();
    this.releaseLocks();
  }
}

function lockName(connectionId: number): string {
  return `inbox:imap:${connectionId}`;
}

/** A mail of the folder as its listing gave it. */
interface Listed {
  uid: number;
  size: number;
}

async function parsed(account: string, uid: number, raw: Buffer, tooLargeAbove?: number): Promise<FetchedMail> {
  return { uid, raw, payload: await readImapMail(account, raw, tooLargeAbove) };
}

/** One mailbox's reader: logged in, IDLE on its folder, storing what arrives; logs in again after a failure. */
class MailboxReader {
  private client: ImapFlow | undefined;
  private wake: (() => void) | undefined;
  /** New mail was announced since the last read began: the next pause ends at once. */
  private announced = false;
  private stopped = false;
  private done: Promise<void> = Promise.resolve();
  private readonly maxMessageBytes: number;

  constructor(
    private readonly deps: Deps,
    readonly mailbox: MailboxRow,
    private readonly options: typeof DEFAULTS & Pick<MailboxReaderOptions, 'beforeCommit'>,
  ) {
    this.maxMessageBytes = imapMaxMessageBytes(deps.config.maxAttachmentBytes);
  }

  start(): void {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.client?.close();
    await this.done;
  }

  private async run(): Promise<void> {
    let backoff = 1000;
    while (!this.stopped) {
      try {
        await this.session();
        backoff = 1000;
      } catch (err) {
        if (this.stopped) break;
        // Sealed credentials that do not open are told as a send's are: set them again.
        const reason = err instanceof SecretBoxError ? CREDENTIALS_DO_NOT_OPEN : (err as Error).message;
        const message = `email.imap: ${reason}`;
        this.deps.log.warn({ connectionId: this.mailbox.id, error: message }, 'reading the mailbox failed; trying again');
        await recordAccountHealth(
          this.deps.db,
          [{ integrationKey: 'email.imap', account: this.mailbox.account, delivered: false, error: message }],
          this.deps.now(),
        ).catch(() => {});
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** Waits `ms`, or less when woken (new mail, stop). */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped || this.announced) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).finally(() => {
      this.wake = undefined;
    });
  }

  private async session(): Promise<void> {
    const credentials = await connectionCredentials(this.deps, this.mailbox.id);
    const { imapUrl, username, password } = credentials ?? {};
    if (!imapUrl || !username || !password) throw new Error(`${NO_CREDENTIALS}: set credentials.imapUrl, username and password`);
    const client = await openImap(
      { imapUrl, username, password },
      { allowPrivate: this.deps.config.allowPrivateSmtp, resolve: this.deps.resolveHost, timeoutMs: IMAP_TIMEOUT_MS },
    );
    this.client = client;
    let closed = false;
    client.on('close', () => {
      closed = true;
      this.wake?.();
    });
    // Mail announced while a read is under way is read by the next one, not lost until the poll.
    client.on('exists', () => {
      this.announced = true;
      this.wake?.();
    });
    try {
      if (this.stopped) return;
      await openFolder(client, this.mailbox.folder);
      while (!this.stopped && !closed) {
        this.announced = false;
        await this.sync(client);
        if (this.stopped || closed) break;
        // IDLE until the server tells of new mail; the next command ends it.
        client.idle().catch(() => {});
        await this.pause(this.options.pollMs);
      }
      if (!this.stopped) throw new Error('the IMAP server closed the connection');
    } finally {
      this.client = undefined;
      client.close();
    }
  }

  /** Stores every mail above the last UID stored, in batches, each committed before the next. */
  private async sync(client: ImapFlow): Promise<void> {
    const box = client.mailbox as MailboxObject;
    const uidValidity = Number(box.uidValidity);
    const state = await findMailboxState(this.deps.db, this.mailbox.id);
    const same = state !== undefined && state.uidValidity === uidValidity && state.folder === this.mailbox.folder;
    // A new UIDVALIDITY (or folder) renumbered the mails: read it all again; what was stored stays once.
    const lastUid = same ? state.lastUid : 0;
    const listed: Listed[] = [];
    if (box.exists > 0) {
      for await (const m of client.fetch(`${lastUid + 1}:*`, { uid: true, size: true }, { uid: true }))
        if (m.uid > lastUid) listed.push({ uid: m.uid, size: m.size ?? 0 });
    }
    listed.sort((a, b) => a.uid - b.uid);
    if (listed.length === 0) {
      if (!same) await storeMails(this.deps.pool, this.deps.boss, this.mailbox, uidValidity, 0, []);
      return;
    }
    const batches: Listed[][] = [];
    let batch: Listed[] = [];
    let bytes = 0;
    for (const item of listed) {
      if (batch.length > 0 && (batch.length >= this.options.batchSize || bytes + item.size > this.options.batchBytes)) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(item);
      bytes += Math.min(item.size, this.maxMessageBytes);
    }
    batches.push(batch);
    // One batch at a time, committed in UID order: the last UID stored says exactly what is
    // stored. (Reading the next batch while one commits was tried: no faster on an idle
    // machine, where 1,000 mails take 15 s, and one run of it stalled.)
    for (const listedBatch of batches) {
      const mails = await this.readBatch(client, listedBatch);
      if (this.stopped) return;
      await this.storeBatch(uidValidity, listedBatch, mails);
    }
  }

  /** Fetches a batch's mails in one FETCH (the few too large to read whole in a second one) and parses them. */
  private async readBatch(client: ImapFlow, batch: Listed[]): Promise<FetchedMail[]> {
    const max = this.maxMessageBytes;
    const whole = batch.filter((m) => m.size <= max).map((m) => m.uid);
    const large = batch.filter((m) => m.size > max).map((m) => m.uid);
    const reads: Promise<FetchedMail>[] = [];
    // Read with BODY.PEEK: nothing is marked read. Parsed side by side: each parse waits on its stream.
    if (whole.length > 0)
      for (const m of await client.fetchAll(whole.join(','), { uid: true, source: true }, { uid: true }))
        if (m.source) reads.push(parsed(this.mailbox.account, m.uid, m.source));
    // Too large to read whole: stored by their headers, failing with why.
    if (large.length > 0)
      for (const m of await client.fetchAll(large.join(','), { uid: true, headers: true }, { uid: true }))
        if (m.headers) reads.push(parsed(this.mailbox.account, m.uid, m.headers, max));
    const mails = await Promise.all(reads);
    return mails.sort((a, b) => a.uid - b.uid);
  }

  private async storeBatch(uidValidity: number, batch: Listed[], mails: FetchedMail[]): Promise<void> {
    const lastUid = batch[batch.length - 1]!.uid;
    const hook = this.options.beforeCommit;
    const stored = await storeMails(
      this.deps.pool,
      this.deps.boss,
      this.mailbox,
      uidValidity,
      lastUid,
      mails,
      hook ? () => hook(this.mailbox.id) : undefined,
    );
    if (stored > 0) this.deps.log.info({ connectionId: this.mailbox.id, stored, lastUid }, 'mails stored');
  }
}
