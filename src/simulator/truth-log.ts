/**
 * The simulator's record of the truth, for measuring staleness: for every record of every kind the
 * pipeline reads, when it last changed, a bounded history of its change times, and a time-ordered log
 * of every change, so a benchmark can tell how long a change waited to reach the warehouse.
 *
 * A change is logged at the simulated instant it happened; a response served at or after that instant
 * shows it, one served before does not. Records never changed while the simulator ran report the time
 * the generated data gives them (their `updated_at`, their newest visit, …).
 */

export const TRUTH_KINDS = [
  'member.profile',
  'member.status',
  'member.wallets',
  'member.tags',
  'member.visits',
  'member.memberships',
  'restaurant',
  'restaurant.challenges',
  'location',
  'location.open_hours',
  'intent',
] as const;

/** `member.*` are keyed by member id, `restaurant*` by restaurant id, `location*` by location id. */
export type TruthKind = (typeof TRUTH_KINDS)[number];

export interface TruthChange {
  kind: TruthKind;
  id: string;
  atMs: number;
}

/** The read side, as the control surface exposes it. */
export interface TruthReader {
  /** When the record last changed (epoch ms), or null when there is no such record. */
  lastChangedAt(kind: TruthKind, id: string): number | null;
  /** Change times logged while the simulator ran, oldest first (the last `historyPerRecord`). */
  changeTimes(kind: TruthKind, id: string): number[];
  /** Changes with sinceMs < atMs <= untilMs, in time order (ties in the order they were logged). */
  changesSince(sinceMs: number, untilMs?: number): IterableIterator<TruthChange>;
  /** Changes per kind with sinceMs < atMs <= untilMs. */
  counts(sinceMs?: number, untilMs?: number): Record<TruthKind, number>;
  /** Changes held in the log, and the time of the oldest one (older changes were dropped). */
  retained(): { changes: number; oldestAtMs: number | null };
}

export interface TruthLogOptions {
  /** Changes the log keeps before dropping the oldest half. Default 4,000,000 (about 52 MB when full). */
  capacity?: number;
  /** Change times kept per record. Default 32. */
  historyPerRecord?: number;
}

const KIND_INDEX = new Map<TruthKind, number>(TRUTH_KINDS.map((kind, i) => [kind, i]));

export function isTruthKind(value: unknown): value is TruthKind {
  return typeof value === 'string' && KIND_INDEX.has(value as TruthKind);
}

export class TruthLog implements TruthReader {
  private readonly capacity: number;
  private readonly historyPerRecord: number;
  // The log, columnar: 13 bytes a change (time, kind, interned id).
  private at = new Float64Array(1024);
  private kind = new Uint8Array(1024);
  private ref = new Uint32Array(1024);
  private length = 0;
  /** Bumped when entries move (compaction, an out-of-order insert): iterators find their place again. */
  private reshuffles = 0;
  private readonly ids: string[] = [];
  private readonly idRefs = new Map<string, number>();
  private readonly history: Map<string, number[]>[] = TRUTH_KINDS.map(() => new Map<string, number[]>());

  constructor(
    /** The generated data's last change of a record never changed since, or null for no such record. */
    private readonly initialChangeAt: (kind: TruthKind, id: string) => number | null,
    options: TruthLogOptions = {},
  ) {
    this.capacity = Math.max(16, options.capacity ?? 4_000_000);
    this.historyPerRecord = Math.max(1, options.historyPerRecord ?? 32);
  }

  /** Logs a change; a second change of the same record at the instant of its latest one is the same change. */
  record(kind: TruthKind, id: string, atMs: number): void {
    const k = KIND_INDEX.get(kind) ?? 0;
    const perRecord = this.history[k];
    let times = perRecord?.get(id);
    if (!times) {
      times = [];
      perRecord?.set(id, times);
    }
    if (times[times.length - 1] === atMs) return;
    insertSorted(times, atMs);
    if (times.length > this.historyPerRecord) times.shift();
    this.append(k, this.refOf(id), atMs);
  }

  lastChangedAt(kind: TruthKind, id: string): number | null {
    const times = this.history[KIND_INDEX.get(kind) ?? 0]?.get(id);
    const last = times?.[times.length - 1];
    return last ?? this.initialChangeAt(kind, id);
  }

  changeTimes(kind: TruthKind, id: string): number[] {
    return [...(this.history[KIND_INDEX.get(kind) ?? 0]?.get(id) ?? [])];
  }

  *changesSince(sinceMs: number, untilMs = Infinity): IterableIterator<TruthChange> {
    let position = this.upperBound(sinceMs);
    let seen = this.reshuffles;
    let lastAt = sinceMs;
    let sameTimeYielded = 0;
    while (position < this.length) {
      const atMs = this.at[position] ?? 0;
      if (atMs > untilMs) return;
      const kind = TRUTH_KINDS[this.kind[position] ?? 0] ?? 'intent';
      const id = this.ids[this.ref[position] ?? 0] ?? '';
      sameTimeYielded = atMs === lastAt ? sameTimeYielded + 1 : 1;
      lastAt = atMs;
      yield { kind, id, atMs };
      position++;
      if (seen !== this.reshuffles) {
        // Compacted or written out of order while the caller held us: find our place again by time.
        seen = this.reshuffles;
        position = this.lowerBound(lastAt) + sameTimeYielded;
      }
    }
  }

  counts(sinceMs = -Infinity, untilMs = Infinity): Record<TruthKind, number> {
    const counts = Object.fromEntries(TRUTH_KINDS.map((kind) => [kind, 0])) as Record<TruthKind, number>;
    for (let p = this.upperBound(sinceMs); p < this.length && (this.at[p] ?? 0) <= untilMs; p++) {
      const kind = TRUTH_KINDS[this.kind[p] ?? 0];
      if (kind) counts[kind]++;
    }
    return counts;
  }

  retained(): { changes: number; oldestAtMs: number | null } {
    return { changes: this.length, oldestAtMs: this.length > 0 ? (this.at[0] ?? null) : null };
  }

  private refOf(id: string): number {
    let ref = this.idRefs.get(id);
    if (ref === undefined) {
      ref = this.ids.length;
      this.ids.push(id);
      this.idRefs.set(id, ref);
    }
    return ref;
  }

  /** First position whose time is > value. */
  private upperBound(value: number): number {
    return this.bound(value, true);
  }

  /** First position whose time is >= value. */
  private lowerBound(value: number): number {
    return this.bound(value, false);
  }

  private bound(value: number, upper: boolean): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.at[mid] ?? 0;
      if (at < value || (upper && at === value)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private append(kind: number, ref: number, atMs: number): void {
    if (this.length === this.capacity) this.dropOldestHalf();
    if (this.length === this.at.length) this.grow();
    // Changes arrive in time order but for a clock set backwards by hand: those go in their place.
    const position =
      this.length === 0 || (this.at[this.length - 1] ?? 0) <= atMs ? this.length : this.upperBound(atMs);
    if (position < this.length) {
      this.reshuffles++;
      this.at.copyWithin(position + 1, position, this.length);
      this.kind.copyWithin(position + 1, position, this.length);
      this.ref.copyWithin(position + 1, position, this.length);
    }
    this.at[position] = atMs;
    this.kind[position] = kind;
    this.ref[position] = ref;
    this.length++;
  }

  private grow(): void {
    const size = Math.min(this.capacity, this.at.length * 2);
    const at = new Float64Array(size);
    at.set(this.at);
    const kind = new Uint8Array(size);
    kind.set(this.kind);
    const ref = new Uint32Array(size);
    ref.set(this.ref);
    this.at = at;
    this.kind = kind;
    this.ref = ref;
  }

  private dropOldestHalf(): void {
    const drop = Math.floor(this.length / 2);
    this.reshuffles++;
    this.at.copyWithin(0, drop, this.length);
    this.kind.copyWithin(0, drop, this.length);
    this.ref.copyWithin(0, drop, this.length);
    this.length -= drop;
  }
}

function insertSorted(times: number[], atMs: number): void {
  let i = times.length;
  while (i > 0 && (times[i - 1] ?? 0) > atMs) i--;
  times.splice(i, 0, atMs);
}
