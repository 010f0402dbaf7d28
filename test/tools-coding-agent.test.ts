import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { codingTools, createAgent, createPermissions, scripted, type ToolResultMessage } from "../index.js";
import { tempDir } from "./fixtures/tools-helpers.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("am-agent-tools-"));
  await mkdir(path.join(root, ".git"));
  await writeFile(path.join(root, "app.ts"), "let x = 1;\nlet y = 1;\nlet z = 1;\n");
});
afterEach(() => cleanup());

const resultsOf = (messages: readonly unknown[]) =>
  (messages as { role: string }[]).filter((m) => m.role === "toolResult") as ToolResultMessage[];
const text = (m: ToolResultMessage) => m.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("coding tools inside an agent", () => {
  it("shows the model clear errors for bad input and leaves the files as they were", async () => {
    const provider = scripted([
      {
        toolCalls: [
          {
            id: "ambiguous",
            name: "edit_file",
            arguments: { path: "app.ts", old_string: " = 1;", new_string: " = 2;" },
          },
          {
            id: "missing",
            name: "edit_file",
            arguments: { path: "app.ts", old_string: "let w", new_string: "let v" },
          },
          { id: "git", name: "write_file", arguments: { path: ".git/hooks/post-checkout", content: "evil" } },
          { id: "escape", name: "read_file", arguments: { path: "../../etc/passwd" } },
          { id: "absolute", name: "read_file", arguments: { path: "/etc/passwd" } },
        ],
      },
      { text: "I will be more careful." },
    ]);
    const agent = createAgent({
      provider,
      tools: codingTools({ cwd: root }),
      toolExecution: "sequential",
      permissions: createPermissions({ mode: "bypass" }),
    });
    await agent.prompt("edit it");
    const seen = resultsOf(provider.requests[1]!.messages);
    expect(seen.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["ambiguous", true],
      ["missing", true],
      ["git", true],
      ["escape", true],
      ["absolute", true],
    ]);
    expect(text(seen[0]!)).toMatch(/old_string matches 3 times in app\.ts/);
    expect(text(seen[1]!)).toMatch(/0 matches/);
    expect(text(seen[2]!)).toMatch(/Writing into \.git\/ is not allowed/);
    expect(text(seen[3]!)).toMatch(/outside the workspace/);
    expect(text(seen[4]!)).toMatch(/"\/etc\/passwd" is outside the workspace/);
    expect(await readFile(path.join(root, "app.ts"), "utf8")).toBe("let x = 1;\nlet y = 1;\nlet z = 1;\n");
  });

  it("runs an allowed bash prefix without asking and asks for anything else", async () => {
    const provider = scripted([
      {
        toolCalls: [
          { id: "allowed", name: "bash", arguments: { command: "echo hello" } },
          { id: "asks", name: "bash", arguments: { command: "echo hi > out.txt" } },
        ],
      },
      { text: "ok" },
    ]);
    const agent = createAgent({
      provider,
      tools: codingTools({ cwd: root }),
      permissions: createPermissions({ cwd: root, rules: { allow: ["bash(echo:*)"] } }),
    });
    const asked: string[] = [];
    agent.events$.subscribe((e) => {
      if (e.type === "approval_requested") {
        asked.push(e.toolCallId);
        agent.deny(e.toolCallId, "no redirections");
      }
    });
    await agent.prompt("go");
    expect(asked).toEqual(["asks"]);
    const results = resultsOf(agent.messages);
    expect(text(results[0]!)).toBe("hello\n");
    expect(text(results[1]!)).toBe("The user denied this tool call: no redirections");
    await expect(readFile(path.join(root, "out.txt"))).rejects.toThrow(/ENOENT/);
  });
});
