import type { EventBus, TrellisEvent, Unsubscribe } from '../ports/EventBus.js';

/** Delivers events to the subscribers of this process; a listener that throws harms no other. */
export class InProcessEventBus implements EventBus {
  private readonly listeners = new Set<(event: TrellisEvent) => void>();

  async publish(event: TrellisEvent): Promise<void> {
    this.deliver(event);
  }

  /** Hands an event that arrived from elsewhere (another replica) to local subscribers. */
  deliver(event: TrellisEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A faulty subscriber must not stop delivery to the others.
      }
    }
  }

  subscribe(listener: (event: TrellisEvent) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }
}
