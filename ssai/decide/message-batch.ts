// Messages between the main thread and a decision thread, batched (ssai/decision-threads.ts): a message costs a clone
// and a wake-up of the other side, about as much as the rest of a decision's work, and decisions come in bursts.

/**
 * A sender of items that posts them as arrays: the items of one turn of the event loop together, or `max` at once
 * (the receiver handles a batch in one go, so a long one would hold its other work that long).
 */
export function batchedSender<T>(post: (batch: T[]) => void, max = Number.POSITIVE_INFINITY): (item: T) => void {
  let outbox: T[] = [];
  const flush = (): void => {
    if (!outbox.length) return;
    const batch = outbox;
    outbox = [];
    post(batch);
  };
  return (item) => {
    const n = outbox.push(item);
    if (n >= max) flush();
    else if (n === 1) setImmediate(flush);
  };
}
