import { describe, expect, it } from "vitest";
import {
  anthropic,
  codingTools,
  contextConfigForModel,
  createAgent,
  createBashTool,
  createEditFileTool,
  createGlobTool,
  createGrepTool,
  createListFilesTool,
  createPermissions,
  createReadFileTool,
  createWriteFileTool,
  mcpTools,
  openai,
  openaiCompatible,
  scripted,
  subAgentTool,
} from "../index.js";

// A typo in an option (above all a security option) must be an error, never an option silently
// left at its default.

const provider = scripted([{ text: "hi" }]);
const cwd = process.cwd();

describe("unknown option keys are refused with a clear error", () => {
  it("createAgent names the key, suggests the closest known one and lists the rest", () => {
    expect(() => createAgent({ provider, permisions: createPermissions() } as never)).toThrow(
      /^createAgent: unknown option "permisions" \(did you mean "permissions"\?\)\. Known options: provider, .*permissions/,
    );
    expect(() => createAgent({ provider, sandbox: true } as never)).toThrow(
      /createAgent: unknown option "sandbox"/,
    );
  });

  it("createAgent checks its nested option objects too", () => {
    expect(() => createAgent({ provider, limits: { maxTurn: 3 } } as never)).toThrow(
      /createAgent limits: unknown option "maxTurn" \(did you mean "maxTurns"\?\)/,
    );
    expect(() => createAgent({ provider, retry: { retries: 2 } } as never)).toThrow(
      /createAgent retry: unknown option "retries"/,
    );
    expect(() => createAgent({ provider, hooks: { beforeToolcall: () => undefined } } as never)).toThrow(
      /createAgent hooks: unknown option "beforeToolcall" \(did you mean "beforeToolCall"\?\)/,
    );
    expect(() =>
      createAgent({ provider, context: { maxContextTokens: 1000, keeprecent: 2 } } as never),
    ).toThrow(/ContextConfig: unknown option "keeprecent" \(did you mean "keepRecent"\?\)/);
    expect(() => contextConfigForModel(10_000, { reserve: 10 } as never)).toThrow(
      /contextConfigForModel: unknown option "reserve"/,
    );
  });

  it("accepts every documented option", () => {
    const agent = createAgent({
      provider,
      systemPrompt: "s",
      tools: [],
      messages: [],
      toolExecution: "auto",
      steeringMode: "all",
      followUpMode: "one-at-a-time",
      hooks: { beforeToolCall: () => undefined },
      inputFilters: [],
      limits: { maxTurns: 2, maxTokens: 1000, maxDurationMs: 1000 },
      context: { maxContextTokens: 10_000, keepRecent: 4 },
      toolTimeoutMs: 1000,
      eagerToolExecution: true,
      permissions: createPermissions({ mode: "bypass" }),
      retry: { maxRetries: 1 },
      convertToLlm: (messages) => messages as never,
      id: "a",
    });
    agent.stop();
  });

  it("every tool factory refuses an unknown key", () => {
    const factories: [string, () => unknown][] = [
      ["createBashTool", () => createBashTool({ workspace: cwd, timeout: 5 } as never)],
      ["createReadFileTool", () => createReadFileTool({ workspace: cwd, maxLines: 5 } as never)],
      ["createWriteFileTool", () => createWriteFileTool({ workspace: cwd, overwrite: false } as never)],
      ["createEditFileTool", () => createEditFileTool({ workspace: cwd, maxBytes: 5 } as never)],
      ["createListFilesTool", () => createListFilesTool({ workspace: cwd, limit: 5 } as never)],
      ["createGrepTool", () => createGrepTool({ workspace: cwd, rg: false } as never)],
      ["createGlobTool", () => createGlobTool({ workspace: cwd, limit: 5 } as never)],
      ["codingTools", () => codingTools({ cwd, readOnly: true } as never)],
      ["createSandbox", () => codingTools({ cwd, sandbox: { netwrok: true } } as never)],
      ["createPermissions", () => createPermissions({ mode: "default", deny: ["bash"] } as never)],
      ["createPermissions rules", () => createPermissions({ rules: { denied: ["bash"] } } as never)],
      [
        "subAgentTool",
        () => subAgentTool({ name: "s", description: "d", provider, permissions: 1 } as never),
      ],
      ["anthropic", () => anthropic({ model: "m", apikey: "k" } as never)],
      ["openai", () => openai({ model: "m", baseUrl: "http://x" } as never)],
      ["openaiCompatible", () => openaiCompatible({ model: "m", baseURL: "http://x", key: "k" } as never)],
    ];
    for (const [where, create] of factories) {
      expect(create, where).toThrow(new RegExp(`^${where}: unknown option`));
    }
  });

  it("mcpTools refuses an unknown key before starting anything", async () => {
    await expect(mcpTools({ command: "does-not-exist", prefx: "fs" } as never)).rejects.toThrow(
      /mcpTools: unknown option "prefx" \(did you mean "prefix"\?\)/,
    );
  });

  it("a typo in the bash sandbox's options is refused before anything runs, never ignored", () => {
    expect(() => createBashTool({ workspace: cwd, sandbox: { netwrok: true } } as never)).toThrow(
      /^createSandbox: unknown option "netwrok" \(did you mean "network"\?\)/,
    );
    expect(() => createBashTool({ workspace: cwd, sandbox: { denyread: [] } } as never)).toThrow(
      /^createSandbox: unknown option "denyread" \(did you mean "denyRead"\?\)/,
    );
  });

  it("a sub-agent's agentOptions refuse keys that belong to the tool itself", () => {
    expect(() =>
      subAgentTool({ name: "s", description: "d", provider, agentOptions: { provider } as never }),
    ).toThrow(
      /subAgentTool agentOptions: option "provider" is not supported: set provider on subAgentTool itself/,
    );
    expect(() =>
      subAgentTool({ name: "s", description: "d", provider, agentOptions: { permission: 1 } as never }),
    ).toThrow(/subAgentTool agentOptions: unknown option "permission" \(did you mean "permissions"\?\)/);
  });

  it("permission modes and rule kinds are checked as well", () => {
    expect(() => createPermissions({ mode: "bypas" as never })).toThrow(
      /createPermissions: unknown permission mode "bypas"; use one of default, acceptEdits, plan, bypass, deny/,
    );
    const permissions = createPermissions();
    expect(() => permissions.setMode("Plan" as never)).toThrow(/setMode: unknown permission mode "Plan"/);
    expect(permissions.mode).toBe("default");
    expect(() => permissions.addRule("denied" as never, "bash")).toThrow(
      /addRule: unknown rule kind "denied"/,
    );
    expect(() => createPermissions({ rules: { deny: "bash(rm:*)" as never } })).toThrow(
      /rules\.deny must be an array of rule strings/,
    );
  });
});
