// mcpTools when the server's tool list changes while it runs (notifications/tools/list_changed):
// the set's `tools` array follows it in place and `onToolsChanged` says so, so an app that passes
// `set.tools` to each run (`agent.prompt(text, { tools: set.tools })`) gives the model the new list.
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createAgent, type McpToolSet, mcpTools, scripted, type Tool } from "../index.js";
import { runTool } from "./fixtures/tools-helpers.js";
import { expectValidTranscript } from "./helpers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const changingServer = {
  command: process.execPath,
  args: ["--import", "tsx", path.join(here, "fixtures", "mcp-changing-server.ts")],
  cwd: path.join(here, ".."),
  protocol: "legacy" as const,
};

const sets: McpToolSet[] = [];
afterEach(async () => {
  for (const set of sets.splice(0)) await set.close();
});

const names = (tools: readonly Tool[]) => tools.map((t) => t.name).sort();

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(check()).toBe(true);
}

describe("mcpTools when the server's tool list changes", () => {
  it("adds a tool the server added and drops one it removed, in the same array; tools that stayed are the same objects", async () => {
    const changes: string[][] = [];
    const set = await mcpTools({
      ...changingServer,
      prefix: "srv",
      onToolsChanged: (tools) => changes.push(names(tools)),
    });
    sets.push(set);
    const tools = set.tools;
    const stays = tools.find((t) => t.name === "srv__stays")!;
    expect(names(tools)).toEqual(["srv__add_tool", "srv__doomed", "srv__remove_tool", "srv__stays"]);

    await runTool(
      tools.find((t) => t.name === "srv__add_tool")!,
      {},
    );
    await until(() => tools.some((t) => t.name === "srv__late"));
    expect(set.tools).toBe(tools);
    expect(tools.find((t) => t.name === "srv__stays")).toBe(stays);
    expect(
      (
        await runTool(
          tools.find((t) => t.name === "srv__late")!,
          {},
        )
      ).text,
    ).toBe("late ran");
    expect(changes.at(-1)).toEqual([
      "srv__add_tool",
      "srv__doomed",
      "srv__late",
      "srv__remove_tool",
      "srv__stays",
    ]);

    const doomed = tools.find((t) => t.name === "srv__doomed")!;
    await runTool(
      tools.find((t) => t.name === "srv__remove_tool")!,
      {},
    );
    await until(() => !tools.some((t) => t.name === "srv__doomed"));
    // A tool object an agent still holds answers with the server's refusal, an error the model reads.
    const stale = await runTool(doomed, {});
    expect(stale.isError).toBe(true);
    expect(stale.text).toMatch(/doomed/);
  }, 60_000);

  it("a run given set.tools gives the model the tool the server added", async () => {
    const set = await mcpTools(changingServer);
    sets.push(set);
    await runTool(
      set.tools.find((t) => t.name === "add_tool")!,
      {},
    );
    await until(() => set.tools.some((t) => t.name === "late"));
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ name: "late", arguments: {} }] }, { text: "done" }]),
    });
    const outcome = await agent.prompt("use the new tool", { tools: set.tools });
    expect(outcome.reason).toBe("stop");
    const result = agent.messages.find((m) => m.role === "toolResult");
    expect(result && result.role === "toolResult" && result.content).toEqual([
      { type: "text", text: "late ran" },
    ]);
    expectValidTranscript(agent.messages);
  }, 60_000);
});
