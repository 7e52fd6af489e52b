import type { CredentialKind } from './http-types.js';

export interface RequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  credential: CredentialKind;
  /** Simulator clock, ISO 8601. */
  at: string;
}

/** Bounded log of /v1 requests (no header values: credentials never enter it). */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  constructor(private readonly limit = 10_000) {}

  add(entry: RequestLogEntry): void {
    this.entries.push(entry);
    // Trimmed by the batch, not per request: a front splice of 10,000 entries on every request
    // would cost more than answering it.
    if (this.entries.length >= 2 * this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  /** The last `limit` requests, oldest first. */
  list(): RequestLogEntry[] {
    return this.entries.slice(-this.limit);
  }

  clear(): void {
    this.entries = [];
  }
}
