// A binary min-heap on a numeric key, in a plain array: thousands of waiting decisions are entries of one array, not
// thousands of timers (issue 19 point 4).

export function heapPush<T>(h: T[], e: T, key: (x: T) => number): void {
  let i = h.push(e) - 1;
  const k = key(e);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (key(h[parent]!) <= k) break;
    h[i] = h[parent]!;
    i = parent;
  }
  h[i] = e;
}

export function heapPop<T>(h: T[], key: (x: T) => number): T | undefined {
  const top = h[0];
  const last = h.pop();
  if (!h.length || last === undefined) return top;
  const k = key(last);
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const c = l + 1 < h.length && key(h[l + 1]!) < key(h[l]!) ? l + 1 : l;
    if (key(h[c]!) >= k) break;
    h[i] = h[c]!;
    i = c;
  }
  h[i] = last;
  return top;
}
