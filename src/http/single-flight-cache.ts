/**
 * One value shared by every caller for `ttlMs`: callers that arrive while it is being computed wait
 * for that computation instead of starting their own (single flight), and callers within `ttlMs`
 * of its completion get the same value. A failure is not kept: the next caller tries again.
 */
export interface SingleFlightCache<T> {
  get(): Promise<T>;
}

export function singleFlightCache<T>(
  compute: () => Promise<T>,
  options: { ttlMs: number; nowMs?: () => number },
): SingleFlightCache<T> {
  const nowMs = options.nowMs ?? (() => performance.now());
  let current: { value: Promise<T>; settledAt: number | null } | null = null;
  return {
    get() {
      if (current !== null) {
        const { settledAt } = current;
        if (settledAt === null || nowMs() - settledAt < options.ttlMs) return current.value;
      }
      const entry: { value: Promise<T>; settledAt: number | null } = {
        value: Promise.resolve().then(compute),
        settledAt: null,
      };
      current = entry;
      entry.value.then(
        () => {
          entry.settledAt = nowMs();
        },
        () => {
          if (current === entry) current = null;
        },
      );
      return entry.value;
    },
  };
}
