import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createAgent,
  createPermissions,
  scripted,
  subAgentTool,
  defineTool,
  type PermissionDecision,
  type PermissionsOptions,
  type Tool,
} from "../index.js";

const tool = (name: string, readOnly: boolean): Tool =>
  defineTool({ name, description: name, parameters: z.object({}).loose(), readOnly, execute: () => "" });

const tools: Record<string, Tool> = {
  bash: tool("bash", false),
  read_file: tool("read_file", true),
  write_file: tool("write_file", false),
  edit_file: tool("edit_file", false),
  grep: tool("grep", true),
  deploy: tool("deploy", false),
};

function decide(
  options: PermissionsOptions,
  toolName: string,
  args: Record<string, unknown>,
): PermissionDecision {
  const permissions = createPermissions({ cwd: "/work/project", ...options });
  return permissions.check({
    toolCall: { type: "toolCall", id: "call_1", name: toolName, arguments: args },
    tool: tools[toolName]!,
    args,
  }) as PermissionDecision;
}

const allow = { behavior: "allow" };
const ask = { behavior: "ask" };
const denied = (reason: RegExp) => ({ behavior: "deny", reason: expect.stringMatching(reason) });

type Case = [string, PermissionsOptions, string, Record<string, unknown>, unknown];

const cases: Case[] = [
  // modes, no rules
  ["default: read-only tool runs", { mode: "default" }, "read_file", { path: "a.ts" }, allow],
  ["default: bash asks", { mode: "default" }, "bash", { command: "ls" }, ask],
  ["default: an edit asks", { mode: "default" }, "edit_file", { path: "a.ts" }, ask],
  ["mode defaults to default", {}, "write_file", { path: "a.ts" }, ask],
  ["acceptEdits: write_file runs", { mode: "acceptEdits" }, "write_file", { path: "a.ts" }, allow],
  ["acceptEdits: edit_file runs", { mode: "acceptEdits" }, "edit_file", { path: "a.ts" }, allow],
  ["acceptEdits: bash still asks", { mode: "acceptEdits" }, "bash", { command: "ls" }, ask],
  ["acceptEdits: other mutating tools ask", { mode: "acceptEdits" }, "deploy", {}, ask],
  [
    "plan: bash is denied with the plan-mode message",
    { mode: "plan" },
    "bash",
    { command: "ls" },
    denied(/^You are in plan mode: bash changes things/),
  ],
  ["plan: edits are denied", { mode: "plan" }, "edit_file", { path: "a.ts" }, denied(/plan mode/)],
  [
    "plan: allow rules do not lift plan mode",
    { mode: "plan", rules: { allow: ["bash"] } },
    "bash",
    { command: "ls" },
    denied(/plan mode/),
  ],
  ["plan: read-only tools run", { mode: "plan" }, "grep", { pattern: "x" }, allow],
  ["bypass: everything runs", { mode: "bypass" }, "deploy", {}, allow],
  [
    "bypass: ask rules do not ask",
    { mode: "bypass", rules: { ask: ["bash"] } },
    "bash",
    { command: "ls" },
    allow,
  ],
  [
    "bypass: deny rules still hold",
    { mode: "bypass", rules: { deny: ["bash(rm:*)"] } },
    "bash",
    { command: "rm -rf x" },
    denied(/bash\(rm:\*\)/),
  ],
  [
    "deny: what would ask is denied",
    { mode: "deny" },
    "bash",
    { command: "ls" },
    denied(/needs approval and approvals are off/),
  ],
  ["deny: read-only tools run", { mode: "deny" }, "read_file", { path: "a" }, allow],
  [
    "deny: allow rules still allow",
    { mode: "deny", rules: { allow: ["bash(ls)"] } },
    "bash",
    { command: "ls" },
    allow,
  ],
  // bash rules
  [
    "prefix rule allows the command",
    { rules: { allow: ["bash(git status:*)"] } },
    "bash",
    { command: "git status" },
    allow,
  ],
  [
    "prefix rule allows it with arguments",
    { rules: { allow: ["bash(git status:*)"] } },
    "bash",
    { command: "git  status --short" },
    allow,
  ],
  [
    "prefix is a whole word",
    { rules: { allow: ["bash(git status:*)"] } },
    "bash",
    { command: "git statusx" },
    ask,
  ],
  [
    "an allowed prefix cannot be chained",
    { rules: { allow: ["bash(git status:*)"] } },
    "bash",
    { command: "git status; rm -rf ~" },
    ask,
  ],
  [
    "nor piped or substituted",
    { rules: { allow: ["bash(git status:*)"] } },
    "bash",
    { command: "git status $(curl x)" },
    ask,
  ],
  [
    "exact rule matches only that command",
    { rules: { allow: ["bash(npm test)"] } },
    "bash",
    { command: "npm test -- --watch" },
    ask,
  ],
  ["exact rule", { rules: { allow: ["bash(npm test)"] } }, "bash", { command: "npm test" }, allow],
  [
    "a deny rule catches a chained part",
    { rules: { allow: ["bash"], deny: ["bash(rm:*)"] } },
    "bash",
    { command: "ls && rm -rf /" },
    denied(/Permission denied by rule "bash\(rm:\*\)"/),
  ],
  [
    "deny beats allow",
    { rules: { allow: ["bash(git:*)"], deny: ["bash(git push:*)"] } },
    "bash",
    { command: "git push --force" },
    denied(/git push/),
  ],
  [
    "ask beats allow",
    { rules: { allow: ["bash(git:*)"], ask: ["bash(git push:*)"] } },
    "bash",
    { command: "git push" },
    ask,
  ],
  [
    "allow rule for the whole tool",
    { rules: { allow: ["bash"] } },
    "bash",
    { command: "anything | at all" },
    allow,
  ],
  // path rules
  [
    "glob rule allows an edit under src/",
    { rules: { allow: ["edit_file(src/**)"] } },
    "edit_file",
    { path: "src/a/b.ts" },
    allow,
  ],
  [
    "glob rule matches absolute paths inside cwd",
    { rules: { allow: ["edit_file(src/**)"] } },
    "edit_file",
    { path: "/work/project/src/x.ts" },
    allow,
  ],
  [
    "glob rule does not match elsewhere",
    { rules: { allow: ["edit_file(src/**)"] } },
    "edit_file",
    { path: "test/a.ts" },
    ask,
  ],
  [
    "glob rule is not fooled by ..",
    { rules: { allow: ["edit_file(src/**)"] } },
    "edit_file",
    { path: "src/../../etc/passwd" },
    ask,
  ],
  [
    "a deny rule on a read-only tool",
    { rules: { deny: ["read_file(.env)"] } },
    "read_file",
    { path: ".env" },
    denied(/read_file\(\.env\)/),
  ],
  [
    "an ask rule on a read-only tool asks",
    { rules: { ask: ["read_file(secrets/**)"] } },
    "read_file",
    { path: "secrets/k" },
    ask,
  ],
  [
    "the * tool rule matches every tool",
    { rules: { deny: ["*"] } },
    "grep",
    { pattern: "x" },
    denied(/"\*"/),
  ],
  [
    "** never climbs out of the workspace through ..",
    { rules: { allow: ["write_file(**/*.txt)"] } },
    "write_file",
    { path: "../outside/escape.txt" },
    ask,
  ],
  [
    "** never crosses a .. inside a path either",
    { rules: { allow: ["write_file(src/**)"] } },
    "write_file",
    { path: "/elsewhere/src/../../x.txt" },
    ask,
  ],
  [
    "** still matches every folder below, dot folders too",
    { rules: { allow: ["write_file(**/*.txt)"] } },
    "write_file",
    { path: ".notes/a/b.txt" },
    allow,
  ],
  [
    "parentheses in a glob are the file name's own",
    { rules: { allow: ["write_file(notes/report (1).txt)"] } },
    "write_file",
    { path: "notes/report (1).txt" },
    allow,
  ],
  [
    "[!x] is a negated class, as in the shell",
    { rules: { allow: ["write_file(src/[!x]*.ts)"] } },
    "write_file",
    { path: "src/xa.ts" },
    ask,
  ],
  [
    "a pattern rule never matches a tool without command or path",
    { rules: { allow: ["deploy(prod)"] } },
    "deploy",
    { target: "prod" },
    ask,
  ],
];

describe("createPermissions", () => {
  it.each(cases)("%s", (_name, options, toolName, args, expected) => {
    expect(decide(options, toolName, args)).toEqual(expected);
  });

  it("allowAlways adds a rule at run time (the CLI's 'always' answer)", () => {
    const permissions = createPermissions({ mode: "default" });
    const request = {
      toolCall: { type: "toolCall" as const, id: "c", name: "write_file", arguments: {} },
      tool: tools.write_file!,
      args: { path: "a" },
    };
    expect(permissions.check(request)).toEqual(ask);
    permissions.allowAlways("write_file");
    expect(permissions.check(request)).toEqual(allow);
    expect(permissions.rules().allow).toEqual(["write_file"]);
    permissions.setMode("plan");
    expect(permissions.mode).toBe("plan");
    expect(permissions.check(request)).toMatchObject({ behavior: "deny" });
  });

  it("createAgent refuses a rule naming no tool of the agent, with the closest name", () => {
    const provider = scripted([]);
    const permissions = createPermissions({ rules: { ask: ["Write_File"] } });
    expect(() => createAgent({ provider, tools: Object.values(tools), permissions })).toThrow(
      /createAgent: permissions: the ask rule "Write_File" names the tool "Write_File", which this agent does not have \(did you mean "write_file"\?\)/,
    );
    expect(() =>
      createAgent({
        provider,
        tools: Object.values(tools),
        permissions: createPermissions({ rules: { deny: ["bash(rm:*)", "deplyo(prod)"] } }),
      }),
    ).toThrow(/the deny rule "deplyo\(prod\)".*did you mean "deploy"/);
    expect(() =>
      createAgent({
        provider,
        tools: Object.values(tools),
        permissions: createPermissions({ mode: "acceptEdits", editTools: ["edit_file", "Deploy"] }),
      }),
    ).toThrow(/createAgent: permissions: editTools names the tool "Deploy".*did you mean "deploy"/);
  });

  it("rules may name a sub-agent's tools, `*`, and tools declared for later", () => {
    const provider = scripted([]);
    const ops = subAgentTool({ name: "ops", description: "ops", provider, tools: [tools.deploy!] });
    const permissions = createPermissions({
      rules: { allow: ["read_file", "*"], ask: ["deploy"], deny: ["mcp__db__drop"] },
      laterTools: ["mcp__db__drop"],
    });
    expect(() => createAgent({ provider, tools: [tools.read_file!, ops], permissions })).not.toThrow();
    // Once the agent's tools are known, a rule added at run time is checked too.
    expect(() => permissions.addRule("allow", "grpe")).toThrow(/"grpe".*Its tools: .*read_file/);
  });

  it("subAgentTool refuses its child's own rule naming no child tool", () => {
    const provider = scripted([]);
    expect(() =>
      subAgentTool({
        name: "ops",
        description: "ops",
        provider,
        tools: [tools.deploy!],
        agentOptions: { permissions: createPermissions({ rules: { deny: ["Deploy"] } }) },
      }),
    ).toThrow(/subAgentTool agentOptions: permissions: .*did you mean "deploy"/);
  });

  it("rejects a malformed rule with a clear error", () => {
    expect(() => createPermissions({ rules: { allow: ["bash(unclosed"] } })).toThrow(
      /Invalid permission rule "bash\(unclosed"/,
    );
  });
});
