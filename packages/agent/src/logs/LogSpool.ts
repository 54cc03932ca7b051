import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { StreamType } from '@trellis/core';

/** A chunk of the job log with its sequence number, ready to post. */
export interface SealedChunk {
  seq: number;
  stream: StreamType;
  text: string;
  bytes: number;
}

interface Record {
  seq: number;
  stream: StreamType;
  offset: number;
  bytes: number;
}

/**
 * Where sealed chunks wait on disk while the control plane is slower than the engine: appended
 * and taken back first in, first out, so memory stays bounded and nothing is dropped. The text is
 * already redacted; the file is the owner's only and is removed when the log is closed. Only the
 * small index lives in memory.
 */
export class LogSpool {
  private fd: number | null = null;
  private readonly records: Record[] = [];
  private head = 0;
  private writeOffset = 0;
  private held = 0;

  constructor(private readonly path: string) {}

  /** Chunks waiting in the file. */
  get length(): number {
    return this.records.length - this.head;
  }

  /** Bytes of log text waiting in the file. */
  get bytes(): number {
    return this.held;
  }

  push(chunk: SealedChunk): void {
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      this.fd = openSync(this.path, 'w+', 0o600);
    }
    const data = Buffer.from(chunk.text, 'utf8');
    let written = 0;
    while (written < data.length) {
      written += writeSync(this.fd, data, written, data.length - written, this.writeOffset + written);
    }
    this.records.push({ seq: chunk.seq, stream: chunk.stream, offset: this.writeOffset, bytes: data.length });
    this.writeOffset += data.length;
    this.held += data.length;
  }

  /** The oldest chunk in the file, taken out of it. */
  shift(): SealedChunk | undefined {
    const record = this.records[this.head];
    if (!record || this.fd === null) return undefined;
    const data = Buffer.alloc(record.bytes);
    let read = 0;
    while (read < record.bytes) {
      const got = readSync(this.fd, data, read, record.bytes - read, record.offset + read);
      if (got === 0) throw new Error(`the log spool ${this.path} is shorter than it should be`);
      read += got;
    }
    this.head += 1;
    this.held -= record.bytes;
    if (this.head === this.records.length) {
      // Empty: start the file over so it never grows past what waits in it at once.
      this.records.length = 0;
      this.head = 0;
      this.writeOffset = 0;
    } else if (this.head > 1024) {
      this.records.splice(0, this.head);
      this.head = 0;
    }
    return { seq: record.seq, stream: record.stream, text: data.toString('utf8'), bytes: record.bytes };
  }

  /** Forgets what waits and removes the file. */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.records.length = 0;
    this.head = 0;
    this.writeOffset = 0;
    this.held = 0;
    rmSync(this.path, { force: true });
  }
}
