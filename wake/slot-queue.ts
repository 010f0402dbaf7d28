/** One entry: schedule `id` is due `at`. An entry whose schedule moved on is stale; readers skip it. */
export interface SlotEntry {
  at: number;
  id: string;
}

/**
 * A binary min-heap of due times: the one scheduler of a process finds its next slot among
 * 100,000 schedules in O(log n), holding a two-field entry per schedule and no timer.
 *
 * @example
 * ```ts
 * const queue = createSlotQueue();
 * queue.push({ at: 2000, id: "b" });
 * queue.push({ at: 1000, id: "a" });
 * queue.peek(); // { at: 1000, id: "a" }
 * ```
 */
export function createSlotQueue() {
  const heap: SlotEntry[] = [];
  const before = (a: SlotEntry, b: SlotEntry) => a.at < b.at || (a.at === b.at && a.id < b.id);
  const swap = (i: number, j: number) => {
    [heap[i], heap[j]] = [heap[j]!, heap[i]!];
  };
  return {
    get size() {
      return heap.length;
    },
    peek: (): SlotEntry | undefined => heap[0],
    push(entry: SlotEntry) {
      heap.push(entry);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!before(heap[i]!, heap[parent]!)) break;
        swap(i, parent);
        i = parent;
      }
    },
    pop(): SlotEntry | undefined {
      const top = heap[0];
      const last = heap.pop();
      if (heap.length > 0 && last) {
        heap[0] = last;
        for (let i = 0; ;) {
          const left = 2 * i + 1;
          const right = left + 1;
          let least = i;
          if (left < heap.length && before(heap[left]!, heap[least]!)) least = left;
          if (right < heap.length && before(heap[right]!, heap[least]!)) least = right;
          if (least === i) break;
          swap(i, least);
          i = least;
        }
      }
      return top;
    },
  };
}
