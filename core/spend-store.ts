// Where an agent's lifetime spending is kept apart from its transcript and snapshot, so that
// `limits.maxSessionCostUsd` holds across restarts, hibernation and reloads: an agent created
// again under the same id (from a snapshot, a saved transcript, or nothing) starts from what the
// store recorded, never from less.

/**
 * What an agent spent over its life, in USD, by agent id (`createAgent({ id, spendStore })`).
 * `spent` is read when the agent's actor starts (synchronously: the turn gate checks the budget
 * before the first call); `record` is told the new total after each call that cost something (a
 * model call, a sub-agent's run, a compaction's summary). A `record` that throws or rejects loses
 * nothing in this process (the agent's own count goes on); it is the store's to report.
 */
export interface SpendStore {
  /** The agent's recorded lifetime spending, or `undefined` when none is recorded. */
  spent(agentId: string): number | undefined;
  /** Records the agent's new lifetime total (it only grows). */
  record(agentId: string, totalUsd: number): void | Promise<void>;
}

/**
 * A spend store in memory: agents created again in the same process (a thread dropped and loaded,
 * an agent made again from a saved transcript) keep their lifetime spending. Node apps that
 * restart use `createFileSpendStore`, or their own store over a database.
 *
 * @example
 * ```ts
 * const spendStore = createMemorySpendStore();
 * const agent = createAgent({ provider, id: "user-42", spendStore, limits: { maxSessionCostUsd: 5 } });
 * ```
 */
export function createMemorySpendStore(): SpendStore {
  const totals = new Map<string, number>();
  return {
    spent: (agentId) => totals.get(agentId),
    record(agentId, totalUsd) {
      totals.set(agentId, Math.max(totals.get(agentId) ?? 0, totalUsd));
    },
  };
}

/**
 * Whether `value` can serve as a spend store (`spent` and `record` functions).
 *
 * @example
 * ```ts
 * isSpendStore(createMemorySpendStore()); // true
 * ```
 */
export function isSpendStore(value: unknown): value is SpendStore {
  const candidate = value as Partial<SpendStore> | null;
  return (
    candidate !== null &&
    typeof candidate === "object" &&
    typeof candidate.spent === "function" &&
    typeof candidate.record === "function"
  );
}
