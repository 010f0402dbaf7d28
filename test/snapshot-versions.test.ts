import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createMachine, fromCallback, setup } from "xstate";
import {
  type Agent,
  type AgentMessage,
  agentMachine,
  createAgent,
  machineStructureHash,
  messagesOfSnapshot,
  type PersistedSnapshotData,
  type SnapshotMigration,
  SnapshotVersionError,
  scripted,
  snapshotVersionOf,
} from "../index.js";
import { fixtureScript, fixtureTool } from "./fixtures/snapshots/fixture-agent.js";
import { expectValidTranscript, resultText, toolResults } from "./helpers.js";

const fixtureDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures/snapshots");
const fixtures = readdirSync(fixtureDir).filter((name) => name.endsWith(".json"));
const readFixture = (name: string) => JSON.parse(readFileSync(path.join(fixtureDir, name), "utf8"));

/** Restores a fixture; a refusal says what the developer who changed the machine must do. */
function restoreFixture(create: () => Agent): Agent {
  try {
    return create();
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nThe agent machine changed: add a migration to agent/snapshot-migrations.ts ` +
        "(the upgrade rule in docs/snapshots.md).",
      { cause: error },
    );
  }
}

const current = snapshotVersionOf(agentMachine);

const withoutIds = (messages: readonly AgentMessage[]) => messages.map(({ id: _id, ...rest }) => rest);

function expectUniqueIds(messages: readonly AgentMessage[]): void {
  const ids = messages.map((m) => m.id);
  expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
}

/** An idle snapshot of the current machine, with a follow-up queued. */
async function idleSnapshot() {
  const agent = createAgent({ provider: scripted([{ text: "one" }]) });
  await agent.prompt("hi");
  agent.followUp("later");
  return agent.getPersistedSnapshot() as PersistedSnapshotData;
}

function refusal(create: () => unknown): SnapshotVersionError {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(SnapshotVersionError);
    return error as SnapshotVersionError;
  }
  throw new Error("createAgent restored the snapshot instead of refusing it");
}

describe("snapshot version stamps", () => {
  it("every persisted snapshot carries the format and the machine's structure hash", async () => {
    const snapshot = await idleSnapshot();
    expect(snapshot.snapshotVersion).toEqual(current);
    expect(current).toEqual({ format: 2, machine: expect.stringMatching(/^[0-9a-f]{12}$/) });
    // JSON-safe, and restored as it is by the same release.
    const restored = createAgent({ provider: scripted([]), snapshot: JSON.parse(JSON.stringify(snapshot)) });
    expect(restored.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(restored.actor.getSnapshot().context.followUpQueue).toHaveLength(1);
  });

  it("the hash follows what a snapshot refers to: states, children, context shape; not transitions", () => {
    const base = {
      id: "m",
      initial: "a",
      context: { count: 0 },
      states: { a: { on: { GO: "b" } }, b: {} },
    } as const;
    const hash = machineStructureHash(createMachine(base));
    expect(hash).toMatch(/^[0-9a-f]{12}$/);
    expect(machineStructureHash(createMachine(base))).toBe(hash);
    // A new transition does not change what old snapshots mean.
    expect(
      machineStructureHash(createMachine({ ...base, states: { a: { on: { GO: "b", BACK: "a" } }, b: {} } })),
    ).toBe(hash);
    // A renamed state, a reshaped context or a new invoked actor does.
    expect(
      machineStructureHash(createMachine({ ...base, states: { a: { on: { GO: "c" } }, c: {} } })),
    ).not.toBe(hash);
    expect(machineStructureHash(createMachine({ ...base, context: { count: 0, total: 0 } }))).not.toBe(hash);
    expect(machineStructureHash(createMachine({ ...base, context: { count: "0" } }))).not.toBe(hash);
    expect(
      machineStructureHash(
        setup({ actors: { ticker: fromCallback(() => {}) } }).createMachine({
          ...base,
          states: { a: { on: { GO: "b" } }, b: { invoke: { src: "ticker" } } },
        }),
      ),
    ).not.toBe(hash);
    expect(snapshotVersionOf(agentMachine)).toEqual(current);
  });
});

describe("snapshots written by earlier releases (test/fixtures/snapshots)", () => {
  it("there is a fixture of every kind", () => {
    expect(fixtures.some((name) => name.endsWith(".idle.json"))).toBe(true);
    expect(fixtures.some((name) => name.endsWith(".mid-tool.json"))).toBe(true);
  });

  for (const name of fixtures.filter((n) => n.endsWith(".idle.json"))) {
    it(`${name} restores: transcript and queue intact, and the agent goes on`, async () => {
      const saved = readFixture(name);
      const provider = scripted([fixtureScript[2]!]);
      const agent = restoreFixture(() =>
        createAgent({ provider, tools: [fixtureTool()], systemPrompt: "sys", snapshot: saved }),
      );
      expect(agent.state).toBe("idle");
      // The transcript as saved; a snapshot from before message ids (format 1) gets one per message.
      expect(withoutIds(agent.messages)).toEqual(withoutIds(saved.context.messages));
      expectUniqueIds(agent.messages);
      saved.context.messages.forEach((m: AgentMessage, i: number) => {
        if (m.id !== undefined) expect(agent.messages[i]!.id).toBe(m.id);
      });
      const { messages: added } = await agent.continue();
      expectUniqueIds(agent.messages);
      expect(added[0]).toMatchObject({ source: "followUp" });
      expect(added.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(added[0]).toMatchObject({ content: "and then the folders" });
      expect(provider.requests[0]!.messages).toHaveLength(saved.context.messages.length + 1);
      expect(agent.getPersistedSnapshot()).toMatchObject({ snapshotVersion: current });
    });
  }

  for (const name of fixtures.filter((n) => n.endsWith(".mid-tool.json"))) {
    it(`${name} restores mid-run: the unfinished call runs again and the run completes`, async () => {
      const saved = readFixture(name);
      const runs: string[] = [];
      const provider = scripted([fixtureScript[1]!]);
      const agent = restoreFixture(() =>
        createAgent({ provider, tools: [fixtureTool(runs, 1)], systemPrompt: "sys", snapshot: saved }),
      );
      await agent.waitForIdle();
      expect(runs).toEqual(["lines"]);
      expect(toolResults(agent.messages).map((r) => [r.toolCallId, resultText(r)])).toEqual([
        ["quick", "files: 3"],
        ["slow", "lines: 3"],
      ]);
      expect(agent.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "There are 3 files and 12 lines." }],
      });
      expectValidTranscript(agent.messages);
    });
  }
});

describe("snapshots of another machine version", () => {
  /** A snapshot as an older release would have written it: the follow-up queue was `followUps`. */
  async function olderSnapshot() {
    const snapshot = await idleSnapshot();
    const { followUpQueue, ...context } = snapshot.context as Record<string, unknown>;
    return {
      ...snapshot,
      context: {
        ...context,
        messages: snapshot.context.messages as AgentMessage[],
        followUps: followUpQueue,
      },
      snapshotVersion: { format: 1, machine: "0123456789ab" },
    };
  }
  const renameFollowUps: SnapshotMigration = {
    from: { format: 1, machine: "0123456789ab" },
    to: current,
    description: "followUps was renamed followUpQueue",
    migrate: ({ context: { followUps, ...context }, ...rest }) => ({
      ...rest,
      context: { ...context, followUpQueue: followUps },
    }),
  };

  it("an older snapshot with a registered migration is migrated, then restored", async () => {
    const old = await olderSnapshot();
    const agent = createAgent({
      provider: scripted([{ text: "two" }]),
      snapshot: old,
      snapshotMigrations: [renameFollowUps],
    });
    const { messages: added } = await agent.continue();
    expect(added.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(added[0]).toMatchObject({ content: "later" });
  });

  it("migrations chain through intermediate versions", async () => {
    const old = await olderSnapshot();
    const middle = { format: 1, machine: "aaaaaaaaaaaa" };
    const agent = createAgent({
      provider: scripted([{ text: "two" }]),
      snapshot: old,
      snapshotMigrations: [
        { ...renameFollowUps, to: middle },
        { from: middle, to: current, description: "nothing to do", migrate: (s) => s },
      ],
    });
    expect(agent.actor.getSnapshot().context.followUpQueue).toHaveLength(1);
  });

  it("without a migration it is refused with an error naming both versions, the transcript intact", async () => {
    const old = await olderSnapshot();
    const error = refusal(() => createAgent({ provider: scripted([]), snapshot: old }));
    expect(error.message).toContain("format 1, machine 0123456789ab");
    expect(error.message).toContain(`format ${current.format}, machine ${current.machine}`);
    expect(error.message).toContain("no migration is registered");
    expect(error.found).toEqual({ format: 1, machine: "0123456789ab" });
    expect(error.expected).toEqual(current);
    expect(error.messages).toEqual(old.context.messages);
    expect(messagesOfSnapshot(old)).toEqual(old.context.messages);

    // The exported transcript starts a new agent that remembers the conversation.
    const provider = scripted([{ text: "fresh start" }]);
    const agent = createAgent({ provider, messages: error.messages });
    await agent.prompt("where were we?");
    expect(provider.requests[0]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("a snapshot from a newer format, a failing migration and garbage are refused clearly", async () => {
    const snapshot = await idleSnapshot();
    const newer = refusal(() =>
      createAgent({
        provider: scripted([]),
        snapshot: { ...snapshot, snapshotVersion: { format: 99, machine: "ffffffffffff" } },
      }),
    );
    expect(newer.message).toContain("written by a newer release");
    expect(newer.message).toContain("format 99, machine ffffffffffff");

    const old = await olderSnapshot();
    const failing = refusal(() =>
      createAgent({
        provider: scripted([]),
        snapshot: old,
        snapshotMigrations: [
          {
            ...renameFollowUps,
            migrate: () => {
              throw new Error("cannot carry a queue");
            },
          },
        ],
      }),
    );
    expect(failing.message).toContain('the migration "followUps was renamed followUpQueue" failed');
    expect(failing.message).toContain("cannot carry a queue");
    expect(failing.messages).toEqual(old.context.messages);

    for (const garbage of [null, "snapshot", 42, {}, { context: {} }, []]) {
      const error = refusal(() => createAgent({ provider: scripted([]), snapshot: garbage }));
      expect(error.message).toContain("not a persisted agent snapshot");
      expect(error.messages).toEqual([]);
    }
  });

  it("an unstamped snapshot that does not fit the machine is refused before XState sees it", async () => {
    const { snapshotVersion: _stamp, ...raw } = await idleSnapshot();
    // Unstamped and fitting (e.g. agent.actor.getPersistedSnapshot()): restored as it is.
    expect(createAgent({ provider: scripted([]), snapshot: raw }).messages).toHaveLength(2);

    const renamedState = refusal(() =>
      createAgent({ provider: scripted([]), snapshot: { ...raw, value: { running: "thinking" } } }),
    );
    expect(renamedState.message).toContain('its state "running.thinking" does not exist in this machine');
    expect(renamedState.message).toContain("no version stamp");
    expect(renamedState.messages).toHaveLength(2);

    const unknownChild = refusal(() =>
      createAgent({
        provider: scripted([]),
        snapshot: { ...raw, children: { planner: { src: "planner", snapshot: { status: "active" } } } },
      }),
    );
    expect(unknownChild.message).toContain('its child actor "planner" runs "planner"');
  });

  it("the transcript of a snapshot saved mid-call is valid: finished calls keep their result", () => {
    const saved = readFixture(fixtures.find((n) => n.endsWith(".mid-tool.json"))!);
    const messages: AgentMessage[] = messagesOfSnapshot(saved);
    expectValidTranscript(messages);
    expect(toolResults(messages).map((r) => [r.toolCallId, r.isError, resultText(r)])).toEqual([
      ["quick", false, "files: 3"],
      ["slow", true, expect.stringContaining("Tool count did not finish")],
    ]);
  });
});
