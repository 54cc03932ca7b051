/** Lets one async task at a time through, in arrival order. */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves, in arrival order, once the mutex is this caller's, to the function that frees it. */
  async lock(): Promise<() => void> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    return release;
  }

  async runExclusive<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.lock();
    try {
      return await task();
    } finally {
      release();
    }
  }
}
