/**
 * Changes of the world that are due at a known simulated time (a visit ends, an intent expires, the
 * change model's next step), kept in a binary min-heap on (time, scheduling order). Firing them in that
 * total order, whatever the steps the clock took to get there, is what makes the simulated world
 * deterministic: advancing a week at once or an hour at a time applies the same changes.
 */

export type TimelineFire = (atMs: number) => void;

interface TimelineEvent {
  atMs: number;
  order: number;
  fire: TimelineFire;
}

const before = (a: TimelineEvent, b: TimelineEvent): boolean =>
  a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order);

export class Timeline {
  private readonly heap: TimelineEvent[] = [];
  private nextOrder = 0;
  private appliedUntil = -Infinity;
  private firing = false;
  private fired = 0;

  /** Runs `fire(atMs)` once the timeline is run up to `atMs` (whole milliseconds). */
  schedule(atMs: number, fire: TimelineFire): void {
    if (!Number.isFinite(atMs)) return; // "never"
    this.push({ atMs: Math.ceil(atMs), order: this.nextOrder++, fire });
  }

  get pending(): number {
    return this.heap.length;
  }

  /** Events fired since the world was made. */
  get firedCount(): number {
    return this.fired;
  }

  nextAt(): number | null {
    return this.heap[0]?.atMs ?? null;
  }

  /** The latest time the timeline was run to; changes due up to it are applied. */
  appliedUntilMs(): number {
    return this.appliedUntil;
  }

  /**
   * Fires, in order, every event due at or before `untilMs`, including those the fired events schedule
   * inside the range. A call from inside a firing event (a change that reads the world through the
   * control surface) returns at once: the outer run finishes the range. Time never runs backwards here:
   * a clock set back leaves applied changes applied.
   */
  runUntil(untilMs: number): number {
    if (this.firing) return 0;
    this.firing = true;
    let count = 0;
    try {
      for (let top = this.heap[0]; top !== undefined && top.atMs <= untilMs; top = this.heap[0]) {
        this.pop();
        count++;
        this.fired++;
        top.fire(top.atMs);
      }
      if (untilMs > this.appliedUntil) this.appliedUntil = untilMs;
    } finally {
      this.firing = false;
    }
    return count;
  }

  private push(event: TimelineEvent): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const up = heap[parent];
      if (up === undefined || !before(event, up)) break;
      heap[i] = up;
      i = parent;
    }
    heap[i] = event;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const l = heap[left];
      const r = heap[right];
      const child = r !== undefined && l !== undefined && before(r, l) ? right : left;
      const next = heap[child];
      if (next === undefined || !before(next, last)) break;
      heap[i] = next;
      i = child;
    }
    heap[i] = last;
  }
}
