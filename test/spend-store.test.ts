// Issue 42 item 3 ("per agent over its life, with a store"): maxSessionCostUsd holds across
// restarts and reloads. An agent made again under the same id (with no snapshot, an older one, or
// its transcript alone) starts from what it spent, and a call its budget cannot pay is not made.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  createAgent,
  createFileSpendStore,
  createMemorySpendStore,
  type Provider,
  type ProviderEvent,
  setModelPrice,
  type SpendStore,
  withCost,
} from "../index.js";

setModelPrice("ledger-model", { input: 1, output: 10 });

/** Every call answers with 100 prompt and 900 output tokens: $0.0091; its worst case ~$0.0101. */
function pricedModel() {
  let calls = 0;
  const provider: Provider & { readonly calls: number } = {
    id: "priced",
    model: "ledger-model",
    maxOutputTokens: 1000,
    get calls() {
      return calls;
    },
    async *stream(): AsyncGenerator<ProviderEvent> {
      calls++;
      yield { type: "start" };
      yield { type: "text_delta", delta: `answer ${calls}` };
      const usage = { input: 100, output: 900, cacheRead: 0, cacheWrite: 0, totalTokens: 1000 };
      yield { type: "done", stopReason: "stop", usage: withCost(usage, "ledger-model") };
    },
  };
  return provider;
}

// Two calls fit ($0.0182 spent), a third's worst case does not.
const limits = { maxSessionCostUsd: 0.025, onLimit: "stop" as const };

async function spendTwoCalls(spendStore?: SpendStore) {
  const agent = createAgent({
    provider: pricedModel(),
    id: "user-42",
    limits,
    ...(spendStore && { spendStore }),
  });
  await agent.prompt("one");
  const afterOne = agent.getPersistedSnapshot();
  await agent.prompt("two");
  return { agent, afterOne };
}

/** Prompts `agent` once; whether the model was asked, and whether the session limit stopped it. */
async function third(agent: ReturnType<typeof createAgent>, provider: { calls: number }) {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((e) => events.push(e));
  const outcome = await agent.prompt("three");
  return {
    asked: provider.calls > 0,
    reason: outcome.reason,
    limited: events.some((e) => e.type === "limit_reached" && e.limit === "maxSessionCostUsd"),
  };
}

describe("a lifetime budget kept by a spend store", () => {
  it("an agent made again under the same id, with no snapshot, starts from what it spent", async () => {
    const spendStore = createMemorySpendStore();
    await spendTwoCalls(spendStore);
    expect(spendStore.spent("user-42")).toBeCloseTo(0.0182, 10);
    const provider = pricedModel();
    const again = createAgent({ provider, id: "user-42", limits, spendStore });
    expect(await third(again, provider)).toEqual({ asked: false, reason: "limit", limited: true });
    // Another agent's budget is its own.
    const other = pricedModel();
    const stranger = createAgent({ provider: other, id: "user-7", limits, spendStore });
    expect((await third(stranger, other)).asked).toBe(true);
  });

  it("an older snapshot does not give the budget back", async () => {
    const spendStore = createMemorySpendStore();
    const { afterOne } = await spendTwoCalls(spendStore);
    const provider = pricedModel();
    const restored = createAgent({ provider, id: "user-42", limits, spendStore, snapshot: afterOne });
    expect(await third(restored, provider)).toEqual({ asked: false, reason: "limit", limited: true });
  });

  it("without a store, a transcript reloaded on its own still counts what its calls cost", async () => {
    const { agent } = await spendTwoCalls();
    const provider = pricedModel();
    const reloaded = createAgent({ provider, limits, messages: [...agent.messages] });
    expect(await third(reloaded, provider)).toEqual({ asked: false, reason: "limit", limited: true });
  });

  it("a hibernating agent keeps it through its sleep", async () => {
    const spendStore = createMemorySpendStore();
    const provider = pricedModel();
    const agent = createAgent({ provider, id: "sleeper", limits, spendStore, hibernate: "whenIdle" });
    await agent.prompt("one");
    await agent.prompt("two");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(agent.hibernated).toBe(true);
    expect(provider.calls).toBe(2);
    const outcome = await agent.prompt("three");
    expect(outcome.reason).toBe("limit");
    expect(provider.calls).toBe(2);
    expect(spendStore.spent("sleeper")).toBeCloseTo(0.0182, 10);
  });

  it("a store whose record fails loses nothing in the process: the agent's own count still holds", async () => {
    const failing: SpendStore = {
      spent: () => undefined,
      record: () => {
        throw new Error("disk full");
      },
    };
    const provider = pricedModel();
    const agent = createAgent({ provider, id: "u", limits, spendStore: failing });
    await agent.prompt("one");
    await agent.prompt("two");
    expect(await third(agent, { calls: provider.calls - 2 })).toMatchObject({
      reason: "limit",
      limited: true,
    });
    expect(provider.calls).toBe(2);
  });

  it("createAgent refuses a store without an id, and what is not a store", () => {
    const provider = pricedModel();
    expect(() => createAgent({ provider, limits, spendStore: createMemorySpendStore() })).toThrow(
      /spendStore needs an id/,
    );
    expect(() => createAgent({ provider, id: "a", limits, spendStore: {} as never })).toThrow(/spendStore/);
  });
});

describe("createFileSpendStore", () => {
  it("keeps the totals across a restart (a new store reading the same file)", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "spend-")), "budgets", "spend.json");
    await spendTwoCalls(createFileSpendStore(path));
    expect(JSON.parse(readFileSync(path, "utf8"))["user-42"]).toBeCloseTo(0.0182, 10);
    const provider = pricedModel();
    const afterRestart = createAgent({
      provider,
      id: "user-42",
      limits,
      spendStore: createFileSpendStore(path),
    });
    expect(await third(afterRestart, provider)).toEqual({ asked: false, reason: "limit", limited: true });
  });

  it("a file that is not a record of amounts is a clear error, and is left as it was", () => {
    const path = join(mkdtempSync(join(tmpdir(), "spend-")), "spend.json");
    writeFileSync(path, '{"user-42": "lots"}');
    expect(() => createFileSpendStore(path)).toThrow(/has "lots" for "user-42", not an amount in USD/);
    writeFileSync(path, "not json");
    expect(() => createFileSpendStore(path)).toThrow(/is not JSON/);
    expect(readFileSync(path, "utf8")).toBe("not json");
  });
});
