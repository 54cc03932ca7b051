import { type EventBus, InProcessEventBus, type TrellisEvent, type Unsubscribe } from '@trellis/core';
import type { Client, Notification } from 'pg';

const CHANNEL = 'trellis_events';
/** One NOTIFY per payload, in the array's order (a function scan returns its rows in order). */
const NOTIFY_ALL = 'SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload';
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export interface PostgresEventBusOptions {
  /** Told when the listening connection is lost; the bus reconnects by itself. */
  onError?: (error: unknown) => void;
}

/**
 * The event bus of a deployment on Postgres: events go out with `NOTIFY` and come back to every
 * replica that `LISTEN`s, this one included, so a log stream served by one replica wakes up for a
 * chunk posted to another. Events are ids only (well under NOTIFY's 8000-byte limit).
 */
export class PostgresEventBus implements EventBus {
  private readonly local = new InProcessEventBus();
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private closed = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private publishing: Promise<void> = Promise.resolve();
  /** The events of the next NOTIFY statement, not sent yet. */
  private batch: { payloads: string[]; sent: Promise<void> } | null = null;

  private constructor(
    private readonly connect: () => Client,
    private readonly options: PostgresEventBusOptions,
  ) {}

  static async open(url: string, options: PostgresEventBusOptions = {}): Promise<PostgresEventBus> {
    const pg = await import('pg');
    const Client = pg.default?.Client ?? pg.Client;
    const bus = new PostgresEventBus(
      () => new Client({ connectionString: url, application_name: 'trellis-events' }),
      options,
    );
    await bus.ensureConnected();
    return bus;
  }

  /**
   * NOTIFYs go out on the listening connection, one statement at a time (pg only queues a query
   * sent while another runs as a deprecated courtesy: a warning now, an error in pg@9). The events
   * published while a statement is in flight wait for it together and go out in one statement, in
   * publish order: under load (every log batch is an event) an event waits for one statement, not
   * for each one queued before it. A failed statement fails only its own events' publishes.
   */
  publish(event: TrellisEvent): Promise<void> {
    let batch = this.batch;
    if (batch === null) {
      const payloads: string[] = [];
      const sent = this.publishing.then(async () => {
        // Publishes from here on go in the next statement.
        if (this.batch?.payloads === payloads) this.batch = null;
        const client = await this.ensureConnected();
        await client.query(NOTIFY_ALL, [CHANNEL, payloads]);
      });
      this.publishing = sent.catch(() => {});
      batch = { payloads, sent };
      this.batch = batch;
    }
    batch.payloads.push(JSON.stringify(event));
    return batch.sent;
  }

  /**
   * Runs `work` on the listening connection, in turn with the publishes (pg runs one query at a
   * time per connection): after the events published before it, before those published after.
   * For this package's `PostgresLeadership`, whose advisory locks live as long as this
   * connection's session: `work` gets the client, so a lock taken on an earlier connection is
   * known to be gone.
   */
  onConnection<T>(work: (client: Client) => Promise<T>): Promise<T> {
    this.batch = null;
    const done = this.publishing.then(async () => work(await this.ensureConnected()));
    this.publishing = done.then(
      () => {},
      () => {},
    );
    return done;
  }

  /** Like `onConnection`, but only on the connection open now: when there is none, nothing runs. */
  onOpenConnection(work: (client: Client) => Promise<void>): Promise<void> {
    this.batch = null;
    const done = this.publishing.then(async () => {
      if (this.client) await work(this.client);
    });
    this.publishing = done.then(
      () => {},
      () => {},
    );
    return done;
  }

  subscribe(listener: (event: TrellisEvent) => void): Unsubscribe {
    return this.local.subscribe(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private ensureConnected(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(new Error('the event bus is closed'));
    this.connecting ??= (async () => {
      const client = this.connect();
      try {
        client.on('notification', (message: Notification) => this.onNotification(message));
        client.on('error', (error) => this.onConnectionLost(client, error));
        client.on('end', () => this.onConnectionLost(client, new Error('connection ended')));
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        this.client = client;
        this.reconnectDelay = RECONNECT_MIN_MS;
        return client;
      } catch (error) {
        await client.end().catch(() => {});
        throw error;
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  private onNotification(message: Notification): void {
    if (message.channel !== CHANNEL || !message.payload) return;
    try {
      this.local.deliver(JSON.parse(message.payload) as TrellisEvent);
    } catch {
      // A payload that is not ours is ignored.
    }
  }

  private onConnectionLost(client: Client, error: unknown): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.options.onError?.(error);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureConnected().catch((error) => {
        this.options.onError?.(error);
        this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
        this.scheduleReconnect();
      });
    }, this.reconnectDelay);
    this.reconnectTimer.unref();
  }
}
