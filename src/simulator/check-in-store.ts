/**
 * Columnar check-in storage. Columns are indexed by a stable sequence number (the row's UUID is derived
 * from it); sorted index arrays of sequence numbers (all rows, per location, per restaurant) order rows by
 * (created_at, insertion), so a time filter is two binary searches and a page is a slice: the work per
 * request is about page_size + log n rows, never n.
 */

export const FLAG_SVC_PAY = 1;

export interface CheckInRow {
  seq: number;
  createdAtMs: number;
  /** null while the visit is ongoing. */
  endedAtMs: number | null;
  locationIndex: number;
  svcPayEnabled: boolean;
}

export interface RangeQuery {
  /** Which index to read: all rows, one location, or one restaurant. */
  scope: { kind: 'all' } | { kind: 'location'; index: number } | { kind: 'restaurant'; index: number };
  fromMs: number; // inclusive
  toMs: number; // exclusive
}

export interface PageResult {
  seqs: number[];
  totalCount: number;
  rowsExamined: number;
}

class SortedSeqIndex {
  data: Uint32Array;
  length = 0;
  constructor(capacity: number) {
    this.data = new Uint32Array(Math.max(4, capacity));
  }

  /** First position whose created_at is >= value (lower) or > value (upper). Counts probes. */
  bound(createdAt: Float64Array, value: number, upper: boolean, probes: { n: number }): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      probes.n++;
      const v = createdAt[this.data[mid] ?? 0] ?? 0;
      if (v < value || (upper && v === value)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Inserts after every row with the same created_at, so a new row counts as the newest of its ties. */
  insert(seq: number, createdAt: Float64Array): void {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    const value = createdAt[seq] ?? 0;
    const last = this.length > 0 ? (createdAt[this.data[this.length - 1] ?? 0] ?? 0) : -Infinity;
    const at = value >= last ? this.length : this.bound(createdAt, value, true, { n: 0 });
    this.data.copyWithin(at + 1, at, this.length);
    this.data[at] = seq;
    this.length++;
  }
}

export class CheckInStore {
  private createdAt: Float64Array;
  private endedAt: Float64Array; // NaN = ongoing
  private location: Uint32Array;
  private flags: Uint8Array;
  private size = 0;
  private readonly all: SortedSeqIndex;
  private readonly byLocation: SortedSeqIndex[] = [];
  private readonly byRestaurant: SortedSeqIndex[] = [];

  constructor(
    capacity: number,
    /** location index -> restaurant index; read on every insert, so new locations work. */
    private readonly restaurantOfLocation: (locationIndex: number) => number,
  ) {
    const cap = Math.max(16, capacity);
    this.createdAt = new Float64Array(cap);
    this.endedAt = new Float64Array(cap);
    this.location = new Uint32Array(cap);
    this.flags = new Uint8Array(cap);
    this.all = new SortedSeqIndex(cap);
  }

  get count(): number {
    return this.size;
  }

  add(createdAtMs: number, endedAtMs: number | null, locationIndex: number, flags: number): number {
    if (this.size === this.createdAt.length) this.grow();
    const seq = this.size++;
    this.createdAt[seq] = createdAtMs;
    this.endedAt[seq] = endedAtMs ?? NaN;
    this.location[seq] = locationIndex;
    this.flags[seq] = flags;
    this.all.insert(seq, this.createdAt);
    this.indexFor(this.byLocation, locationIndex).insert(seq, this.createdAt);
    this.indexFor(this.byRestaurant, this.restaurantOfLocation(locationIndex)).insert(seq, this.createdAt);
    return seq;
  }

  get(seq: number): CheckInRow | null {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.size) return null;
    const ended = this.endedAt[seq] ?? NaN;
    return {
      seq,
      createdAtMs: this.createdAt[seq] ?? 0,
      endedAtMs: Number.isNaN(ended) ? null : ended,
      locationIndex: this.location[seq] ?? 0,
      svcPayEnabled: ((this.flags[seq] ?? 0) & FLAG_SVC_PAY) !== 0,
    };
  }

  setEnded(seq: number, endedAtMs: number): void {
    if (seq >= 0 && seq < this.size) this.endedAt[seq] = endedAtMs;
  }

  /** A correction of `svc_pay_enabled` (the partner fixing a stored visit). */
  setSvcPayEnabled(seq: number, enabled: boolean): void {
    if (seq < 0 || seq >= this.size) return;
    this.flags[seq] = enabled
      ? (this.flags[seq] ?? 0) | FLAG_SVC_PAY
      : (this.flags[seq] ?? 0) & ~FLAG_SVC_PAY;
  }

  /** Newest-first page of the rows matching the query. */
  page(query: RangeQuery, page: number, pageSize: number): PageResult {
    const index = this.resolve(query.scope);
    if (!index || query.toMs <= query.fromMs) return { seqs: [], totalCount: 0, rowsExamined: 0 };
    const probes = { n: 0 };
    const lo = index.bound(this.createdAt, query.fromMs, false, probes);
    const hi = index.bound(this.createdAt, query.toMs, false, probes);
    const seqs: number[] = [];
    const start = hi - 1 - page * pageSize;
    for (let pos = start; pos >= lo && pos > start - pageSize; pos--) seqs.push(index.data[pos] ?? 0);
    return { seqs, totalCount: hi - lo, rowsExamined: probes.n + seqs.length };
  }

  /** created_at of the newest row matching the query, or null. */
  newestIn(query: RangeQuery): number | null {
    const index = this.resolve(query.scope);
    if (!index) return null;
    const hi = index.bound(this.createdAt, query.toMs, false, { n: 0 });
    const seq = index.data[hi - 1];
    if (hi === 0 || seq === undefined) return null;
    const value = this.createdAt[seq] ?? 0;
    return value >= query.fromMs ? value : null;
  }

  /** Approximate bytes held by the typed arrays (for the scale test and the banner). */
  byteSize(): number {
    const indexBytes = (list: SortedSeqIndex[]): number =>
      list.reduce((sum, i) => sum + i.data.byteLength, 0);
    return (
      this.createdAt.byteLength +
      this.endedAt.byteLength +
      this.location.byteLength +
      this.flags.byteLength +
      this.all.data.byteLength +
      indexBytes(this.byLocation) +
      indexBytes(this.byRestaurant)
    );
  }

  private resolve(scope: RangeQuery['scope']): SortedSeqIndex | undefined {
    if (scope.kind === 'all') return this.all;
    return (scope.kind === 'location' ? this.byLocation : this.byRestaurant)[scope.index];
  }

  private indexFor(list: SortedSeqIndex[], at: number): SortedSeqIndex {
    // 16 entries (64 bytes) stay inside V8's heap: 20,000 locations make no 20,000 ArrayBuffers.
    while (list.length <= at) list.push(new SortedSeqIndex(16));
    const index = list[at];
    if (!index) throw new Error('index missing');
    return index;
  }

  private grow(): void {
    const cap = this.createdAt.length * 2;
    const grow64 = (a: Float64Array): Float64Array => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.createdAt = grow64(this.createdAt);
    this.endedAt = grow64(this.endedAt);
    const loc = new Uint32Array(cap);
    loc.set(this.location);
    this.location = loc;
    const flags = new Uint8Array(cap);
    flags.set(this.flags);
    this.flags = flags;
  }
}
