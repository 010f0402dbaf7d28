import { describe, expect, it } from "vitest";
import { createAgent, scripted, SnapshotVersionError } from "../index.js";

// What a user who hands createAgent a wrong snapshot is told: the likely mistake, the snapshot's
// version when it has one, and whether there is a transcript to recover.

async function savedSnapshot() {
  const agent = createAgent({ provider: scripted([{ text: "hello" }]) });
  await agent.prompt("hi");
  return JSON.parse(JSON.stringify(agent.getPersistedSnapshot())) as Record<string, any>;
}

function refusal(snapshot: unknown): SnapshotVersionError {
  try {
    createAgent({ provider: scripted([]), snapshot });
  } catch (error) {
    expect(error).toBeInstanceOf(SnapshotVersionError);
    return error as SnapshotVersionError;
  }
  throw new Error("the snapshot was accepted");
}

describe("snapshot errors say what went wrong", () => {
  it("the JSON text instead of the parsed object: did you forget JSON.parse?", async () => {
    const saved = await savedSnapshot();
    const error = refusal(JSON.stringify(saved));
    expect(error.message).toMatch(/did you forget JSON\.parse\?/);
    // Its version and transcript are read from the text all the same.
    expect(error.found).toEqual(saved.snapshotVersion);
    expect(error.message).toContain(`machine ${saved.snapshotVersion.machine}`);
    expect(error.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(error.message).toContain("Its transcript (2 messages) is still readable");
    // Parsed, it restores.
    expect(
      createAgent({ provider: scripted([]), snapshot: JSON.parse(JSON.stringify(saved)) }).messages,
    ).toHaveLength(2);
  });

  it("{}, null and other non-snapshots claim no transcript", () => {
    for (const garbage of [{}, null, 42, [], "not json"]) {
      const error = refusal(garbage);
      expect(error.message).toContain("not a persisted agent snapshot");
      expect(error.message).toContain("It holds no transcript to recover.");
      expect(error.message).not.toContain("still readable");
      expect(error.messages).toEqual([]);
    }
    expect(refusal(null).message).toContain("(it is null)");
    expect(refusal({}).message).toContain("(it has no context)");
  });

  it("a stamped snapshot whose messages are not an array is reported with its version, as damaged", async () => {
    const saved = await savedSnapshot();
    const error = refusal({ ...saved, context: { ...saved.context, messages: { 0: "hi" } } });
    expect(error.found).toEqual(saved.snapshotVersion);
    expect(error.message).not.toContain("no version stamp");
    expect(error.message).toContain(
      `(format ${saved.snapshotVersion.format}, machine ${saved.snapshotVersion.machine})`,
    );
    expect(error.message).toContain(
      "it is damaged: its context.messages is an object, not an array of messages",
    );
  });
});
