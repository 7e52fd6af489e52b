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
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  list(): RequestLogEntry[] {
    return [...this.entries];
  }

  clear(): void {
    this.entries = [];
  }
}
