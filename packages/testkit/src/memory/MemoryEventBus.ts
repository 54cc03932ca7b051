import { type EventBus, type TrellisEvent, type Unsubscribe, UnavailableError } from '@trellis/core';

/**
 * Delivers each event synchronously to every subscriber and keeps it in `published`, so a test
 * asserts what was announced. `failing` makes `publish` reject, as a broken NOTIFY would.
 */
export class MemoryEventBus implements EventBus {
  readonly published: TrellisEvent[] = [];
  /** Listener errors are kept here instead of breaking the publisher. */
  readonly listenerErrors: unknown[] = [];
  failing = false;
  private readonly listeners = new Set<(event: TrellisEvent) => void>();

  async publish(event: TrellisEvent): Promise<void> {
    if (this.failing) throw new UnavailableError('event_bus_unavailable', 'the event bus cannot be reached');
    const copy = structuredClone(event);
    this.published.push(copy);
    for (const listener of [...this.listeners]) {
      try {
        listener(structuredClone(copy));
      } catch (error) {
        this.listenerErrors.push(error);
      }
    }
  }

  /** How many times `close()` was called. */
  closeCalls = 0;

  async close(): Promise<void> {
    this.closeCalls += 1;
    this.listeners.clear();
  }

  subscribe(listener: (event: TrellisEvent) => void): Unsubscribe {
    // Wrapped so the same function subscribed twice gets two deliveries and two unsubscribes.
    const entry = (event: TrellisEvent) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Published events of one type, in order. */
  ofType<T extends TrellisEvent['type']>(type: T): Extract<TrellisEvent, { type: T }>[] {
    return this.published.filter((event): event is Extract<TrellisEvent, { type: T }> => event.type === type);
  }

  clear(): void {
    this.published.length = 0;
    this.listenerErrors.length = 0;
  }
}
