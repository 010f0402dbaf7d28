import { dirname } from "node:path";
import type { SpendStore } from "../core/spend-store.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");

/**
 * A spend store in one JSON file (`{ "<agent id>": <USD>, … }`), read once when made and written
 * whole (to a temporary file, then renamed over it, so a crash mid-write leaves the old totals)
 * each time an agent's total grows. For one process; processes that share budgets share a
 * database, behind a store of their own.
 *
 * @example
 * ```ts
 * const spendStore = createFileSpendStore(".agents/spend.json");
 * const agent = createAgent({ provider, id: "nightly-report", spendStore, limits: { maxSessionCostUsd: 20 } });
 * ```
 */
export function createFileSpendStore(path: string): SpendStore {
  const totals = readTotals(path);
  return {
    spent: (agentId) => totals.get(agentId),
    record(agentId, totalUsd) {
      if (totalUsd <= (totals.get(agentId) ?? 0)) return;
      totals.set(agentId, totalUsd);
      nodeFs().mkdirSync(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      nodeFs().writeFileSync(temporary, JSON.stringify(Object.fromEntries(totals), null, 2));
      nodeFs().renameSync(temporary, path);
    },
  };
}

/** The totals in the file; none when it does not exist yet. A file that is not such a record is an error. */
function readTotals(path: string): Map<string, number> {
  let text: string;
  try {
    text = nodeFs().readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`createFileSpendStore: ${path} is not JSON`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(`createFileSpendStore: ${path} must hold an object of agent ids to USD amounts`);
  }
  const totals = new Map<string, number>();
  for (const [agentId, usd] of Object.entries(parsed)) {
    if (typeof usd !== "number" || !Number.isFinite(usd) || usd < 0) {
      throw new Error(
        `createFileSpendStore: ${path} has ${JSON.stringify(usd)} for "${agentId}", not an amount in USD`,
      );
    }
    totals.set(agentId, usd);
  }
  return totals;
}
