/** Calls `handler` on the first SIGINT/SIGTERM; returns a function that detaches it. */
export function onInterrupt(handler: (signal: NodeJS.Signals) => void): () => void {
  const listener = (signal: NodeJS.Signals) => handler(signal);
  process.once('SIGINT', listener);
  process.once('SIGTERM', listener);
  return () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
}
