import { describe, expect, it } from "vitest";
import { z } from "zod";
import { refusalMessage, ruleAllowing } from "../cli/unattended-approvals.js";
import { defineTool } from "../index.js";

const bash = defineTool({
  name: "bash",
  description: "Runs a command",
  parameters: z.object({ command: z.string() }),
  execute: () => "",
});
const writeFile = defineTool({
  name: "write_file",
  description: "Writes a file",
  parameters: z.object({ path: z.string(), content: z.string() }),
  execute: () => "",
});
const setup = { mode: "default" as const, allow: [], cwd: "/tmp/ws" };
const call = (toolName: string, args: unknown) => ({ toolCallId: "c1", toolName, args });

describe("what the command says of a call it refused for want of someone to approve it", () => {
  it("suggests the narrowest --allow rule that lets exactly that call run", () => {
    expect(ruleAllowing(call("bash", { command: "npm test" }), bash, setup)).toBe("bash(npm test)");
    expect(ruleAllowing(call("write_file", { path: "src/a.ts", content: "" }), writeFile, setup)).toBe(
      "write_file(src/a.ts)",
    );
    // An allow rule never matches a chained command: only the whole tool would let it run.
    expect(ruleAllowing(call("bash", { command: "npm test && rm -rf x" }), bash, setup)).toBe("bash");
    // A command with a newline cannot be written as one rule.
    expect(ruleAllowing(call("bash", { command: "a\nb" }), bash, setup)).toBe("bash");
    // A tool the command does not know of: no rule to suggest, only the mode.
    expect(ruleAllowing(call("deploy", { target: "prod" }), undefined, setup)).toBeUndefined();
  });

  it("names the call (invisible characters shown), the session to resume and every way to allow it", () => {
    const text = refusalMessage(call("bash", { command: "touch \u202Etxt.exe && echo done" }), {
      rule: "bash",
      mode: "acceptEdits",
      sessionId: "20261128-000000000-abcdef",
    });
    expect(text).toContain(
      'bash needs approval and there is no terminal to ask (permission mode "acceptEdits")',
    );
    expect(text).toContain("bash: touch \\u202Etxt.exe && echo done");
    expect(text).not.toContain("\u202E");
    expect(text).toContain("--resume 20261128-000000000-abcdef");
    expect(text).toContain("--allow bash (every bash call)");
    expect(text).toContain("--permission-mode bypass (every call)");
    const write = refusalMessage(call("write_file", { path: "a b.txt", content: "" }), {
      rule: "write_file(a b.txt)",
      mode: "default",
      sessionId: "s",
    });
    expect(write).toContain("--allow 'write_file(a b.txt)' (this call)");
    expect(write).toContain("--permission-mode acceptEdits (file edits)");
  });
});
