import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentEvent, createAgent, createBashTool, scripted, subAgentTool } from "../index.js";
import { processAlive } from "../tools/internal/process-group.js";
import { tempDir } from "./fixtures/tools-helpers.js";

// A child that ignores SIGTERM and writes its pid to a file, so the test can watch it.
const STUBBORN = `(trap '' TERM; echo $BASHPID > child.pid; while true; do sleep 0.05; done) & wait`;

async function waitForPid(file: string): Promise<number> {
  for (;;) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (/^\d+\n$/.test(text)) return Number(text);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a sub-agent running bash, aborted from the parent", () => {
  it("kills the child's whole process group, including a process that ignores SIGTERM", async () => {
    const { dir, cleanup } = await tempDir("am-sub-bash-");
    try {
      const worker = subAgentTool({
        name: "worker",
        description: "Runs commands",
        tools: [createBashTool({ workspace: dir, killGraceMs: 300 })],
        provider: scripted([
          { toolCalls: [{ name: "bash", arguments: { command: STUBBORN } }] },
          { text: "never" },
        ]),
      });
      const parent = createAgent({
        provider: scripted([
          { toolCalls: [{ id: "call_worker", name: "worker", arguments: { task: "run it" } }] },
          { text: "never" },
        ]),
        tools: [worker],
      });
      const events: AgentEvent[] = [];
      parent.events$.subscribe((event) => events.push(event));

      const run = parent.prompt("go");
      const pid = await waitForPid(path.join(dir, "child.pid"));
      expect(processAlive(pid)).toBe(true);
      parent.abort();
      await run;
      // The kill (SIGTERM, then SIGKILL after the grace period) runs in the child's bash tool.
      for (let i = 0; i < 100 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      expect(processAlive(pid)).toBe(false);

      expect(events.find((e) => e.type === "tool_progress")).toMatchObject({
        toolCallId: "call_worker",
        text: `bash ${JSON.stringify({ command: STUBBORN })}`,
      });
      expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({
        toolCallId: "call_worker",
        isError: true,
      });
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
    } finally {
      await cleanup();
    }
  });
});
