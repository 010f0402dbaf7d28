// The space of paths the exploration walks: which calls, cut into which turns, in which order.
import type { ExploredCall } from "../adversarial-calls.js";

/** Per tool: its plain call and its first adversarial one. */
export function representative(calls: readonly ExploredCall[]): ExploredCall[] {
  const picked: ExploredCall[] = [];
  const seen = new Map<string, number>();
  for (const call of calls) {
    const count = seen.get(call.name) ?? 0;
    if (count < 2) picked.push(call);
    seen.set(call.name, count + 1);
  }
  return picked;
}

/** The ways to cut `size` calls into turns of at most `perTurn` calls: [1, 1], [2], ... */
export function layouts(size: number, perTurn: number): number[][] {
  if (size === 0) return [[]];
  const found: number[][] = [];
  for (let first = 1; first <= Math.min(size, perTurn); first++) {
    for (const rest of layouts(size - first, perTurn)) found.push([first, ...rest]);
  }
  return found;
}

export function* sequences<T>(pool: readonly T[], size: number): Generator<T[]> {
  if (size === 0) {
    yield [];
    return;
  }
  for (const head of pool) for (const tail of sequences(pool, size - 1)) yield [head, ...tail];
}

export function split<T>(sequence: readonly T[], layout: readonly number[]): T[][] {
  const turns: T[][] = [];
  let at = 0;
  for (const count of layout) {
    turns.push(sequence.slice(at, at + count));
    at += count;
  }
  return turns;
}
