import { createParser } from 'eventsource-parser';

export interface ServerSentEvent {
  event: string;
  data: string;
  id: string | undefined;
}

/** Parses a `text/event-stream` body into events, in order. */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const queue: ServerSentEvent[] = [];
  const parser = createParser({
    onEvent: (event) => {
      queue.push({ event: event.event ?? 'message', data: event.data, id: event.id });
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) yield queue.shift() as ServerSentEvent;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}
