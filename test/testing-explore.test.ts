import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  codingTools,
  createPermissions,
  defineTool,
  type PermissionChecker,
  subAgentTool,
} from "../index.js";
import {
  adversarialCalls,
  approvalRequired,
  callsAnsweredOnce,
  defaultProperties,
  describeCall,
  type ExplorationSetup,
  exploreAgent,
  noWriteOutsideWorkspace,
  type PathProperty,
  replayPath,
  runEnds,
  scriptedModel,
} from "../testing.js";

// The exploration (agent-machine/testing) tested on itself: the coding tools' default
// configuration keeps every property, and deliberately misconfigured agents are caught, each
// with a short path that replays.

const coding = ({ provider, cwd }: ExplorationSetup) => ({
  provider,
  tools: codingTools({ cwd }),
  permissions: createPermissions({ cwd }),
});

describe("exploring an agent's configuration", { timeout: 120_000 }, () => {
  it(
    "the coding tools' default configuration keeps every property on every one-call path",
    { timeout: 600_000 },
    async () => {
      // EXPLORE_MAX_CALLS=2 measures the next depth (docs/testing.md, "Bounds").
      const maxCalls = Number(process.env.EXPLORE_MAX_CALLS ?? 1);
      const exploration = await exploreAgent({ agent: coding, maxCalls });
      exploration.assertHolds();
      expect(exploration.failures).toEqual([]);
      // Every call of every tool alone, plus the denial of each call that asked.
      expect(exploration.calls).toBeGreaterThanOrEqual(40);
      expect(exploration.paths).toBeGreaterThan(exploration.calls);
      expect(exploration.truncated).toBe(false);
      console.log(
        `explore: coding tools, default permissions: ${exploration.paths} paths ${JSON.stringify(exploration.pathsByCalls)} of ${exploration.calls} calls in ${Math.round(exploration.durationMs)} ms`,
      );
    },
  );

  it("catches a permission rule that lets a write through, with a one-call path", async () => {
    // Meant for scratch files; it lets the model write any .txt without asking.
    const agent = ({ provider, cwd }: ExplorationSetup) => ({
      provider,
      tools: codingTools({ cwd }),
      permissions: createPermissions({ cwd, rules: { allow: ["write_file(**/*.txt)"] } }),
    });
    const exploration = await exploreAgent({ agent });
    expect(exploration.failures).toHaveLength(1);
    const [failure] = exploration.failures;
    expect(failure!.property).toBe("no tool that needs approval runs unapproved");
    expect(failure!.path.turns).toEqual([[expect.objectContaining({ name: "write_file", label: "benign" })]]);
    expect(failure!.problems).toEqual([expect.stringMatching(/^write_file p1_1 ran without approval/)]);
    expect(failure!.description).toMatch(/fails on a path of 1 call/);
    expect(() => exploration.assertHolds()).toThrow(/write_file p1_1 ran without approval/);

    // The path replays: the same call runs again, unapproved.
    const replay = await replayPath({ agent }, failure!.path);
    expect(replay.calls).toEqual([expect.objectContaining({ name: "write_file", executed: true })]);
    expect(replay.calls[0]!.approval).toBeUndefined();
    expect(replay.approvalsAsked).toBe(0);
  });

  it("catches a tool that writes outside the workspace behind an allow rule", async () => {
    const saveNote = (cwd: string) =>
      defineTool({
        name: "save_note",
        description: "Saves a note",
        parameters: z.object({ path: z.string(), text: z.string() }),
        // The bug: a plain join, no workspace.
        execute: ({ path, text }) => {
          writeFileSync(join(cwd, path), text);
          return "saved";
        },
      });
    const exploration = await exploreAgent({
      agent: ({ provider, cwd }) => ({
        provider,
        tools: [saveNote(cwd)],
        permissions: createPermissions({ cwd, rules: { allow: ["save_note"] } }),
      }),
      // The user's policy: notes need no approval; the workspace still holds.
      properties: [approvalRequired((call) => call.name !== "save_note"), noWriteOutsideWorkspace()],
    });
    const [failure] = exploration.failures;
    expect(failure!.property).toBe("no write outside the workspace");
    expect(failure!.path.turns.flat()).toEqual([
      expect.objectContaining({ name: "save_note", label: "path: ../outside/escape.txt" }),
    ]);
    expect(failure!.problems).toEqual(["created outside/escape.txt (during save_note p1_1)"]);
  });

  it("catches an approval skipped under one strategy only: the shortest path runs under it", async () => {
    // A checker meant to spare the user a burst of prompts: a write checked while another one
    // waits for its approval rides on it (the flag clears when the approved call runs). Sequential
    // calls are checked one at a time, after the one before ran, so with every approval granted
    // it holds; parallel calls are all checked at once, and the second write runs unapproved.
    const debounced = (cwd: string) => {
      const base = createPermissions({ cwd });
      let asking = false;
      const permissions: PermissionChecker = {
        async check(request) {
          const decision = await base.check(request);
          if (decision.behavior !== "ask") return decision;
          if (asking) return { behavior: "allow" };
          asking = true;
          return decision;
        },
      };
      return { permissions, hooks: { beforeToolCall: () => void (asking = false) } };
    };
    const options = {
      agent: ({ provider, cwd }: ExplorationSetup) => ({
        provider,
        tools: codingTools({ cwd }).filter((t) => t.name === "write_file"),
        ...debounced(cwd),
      }),
      calls: (tools: Parameters<typeof adversarialCalls>[0], place: Parameters<typeof adversarialCalls>[1]) =>
        adversarialCalls(tools, place).slice(0, 2),
      approvals: "approve" as const,
    };

    const sequentialOnly = await exploreAgent({ ...options, strategies: ["sequential"] });
    expect(sequentialOnly.failures).toEqual([]);
    expect(sequentialOnly.pathsByCalls[2]).toBeGreaterThan(0);

    const exploration = await exploreAgent({ ...options, strategies: ["sequential", "parallel"] });
    const [failure] = exploration.failures;
    expect(failure!.property).toBe("no tool that needs approval runs unapproved");
    expect(failure!.path.strategy).toBe("parallel");
    expect(failure!.path.turns).toHaveLength(1);
    expect(failure!.path.turns[0]).toHaveLength(2);
    expect(failure!.problems).toEqual([expect.stringMatching(/^write_file p1_2 ran without approval/)]);
    expect(failure!.events).toContain("approval_requested:p1_1");
    expect(failure!.events).not.toContain("approval_requested:p1_2");

    // With denials explored too, the same checker fails sequentially as well: a denied write
    // leaves the flag set, and the next write rides on an approval that never came.
    const withDenials = await exploreAgent({ ...options, approvals: "both", strategies: ["sequential"] });
    expect(withDenials.failures[0]!.path).toMatchObject({ strategy: "sequential", decisions: [false] });
  });

  it("also aborts each path at its first call's start and at its first approval, and every call stays answered", async () => {
    const seen: { abortAt?: string; reason?: string; answered: boolean }[] = [];
    const recorder: PathProperty = {
      name: "records",
      check: (outcome) => {
        const end = outcome.events.at(-1);
        seen.push({
          abortAt: outcome.path.abortAt,
          reason: end?.type === "agent_end" ? end.reason : undefined,
          answered: outcome.transcript.filter((m) => m.role === "toolResult").length === outcome.calls.length,
        });
      },
    };
    const exploration = await exploreAgent({
      agent: ({ provider, cwd }) => ({
        provider,
        tools: codingTools({ cwd }).filter((t) => t.name === "write_file" || t.name === "read_file"),
        permissions: createPermissions({ cwd }),
      }),
      maxCalls: 1,
      properties: [...defaultProperties(), recorder],
    });
    exploration.assertHolds();
    const aborted = seen.filter((s) => s.abortAt !== undefined);
    expect(new Set(aborted.map((s) => s.abortAt))).toEqual(new Set(["execution", "approval"]));
    for (const run of aborted) expect(run).toMatchObject({ reason: "aborted", answered: true });
    expect(seen.filter((s) => s.abortAt === undefined).every((s) => s.reason === "stop")).toBe(true);
  });

  it("catches a run that never ends", async () => {
    const hang = defineTool({
      name: "hang",
      description: "Never answers",
      parameters: z.object({}),
      readOnly: true,
      execute: () => new Promise<string>(() => {}),
    });
    const exploration = await exploreAgent({
      agent: ({ provider }) => ({ provider, tools: [hang] }),
      properties: [runEnds()],
      runTimeoutMs: 200,
    });
    expect(exploration.failures.map((f) => f.property)).toEqual(["every run ends"]);
    expect(exploration.failures[0]!.path.turns).toEqual([[expect.objectContaining({ name: "hang" })]]);
  });

  it("checks your own properties too: an approved shell reads outside the workspace", async () => {
    const noSecretRead: PathProperty = {
      name: "nothing outside the workspace is read",
      check: ({ transcript }) =>
        transcript.some(
          (m) => m.role === "toolResult" && JSON.stringify(m.content).includes("outside the workspace"),
        )
          ? ["the model saw the content of outside/secret.txt"]
          : [],
    };
    const exploration = await exploreAgent({
      agent: coding,
      maxCalls: 1,
      properties: [...defaultProperties(), noSecretRead],
    });
    const [failure] = exploration.failures;
    expect(failure!.property).toBe("nothing outside the workspace is read");
    expect(failure!.path.turns).toEqual([
      [expect.objectContaining({ name: "bash", label: "command: cat ../outside/secret.txt" })],
    ]);
    // Denied, the same call is harmless: only the approving path fails.
    expect(failure!.path.decisions).toEqual([]);
  });
});

describe("the exploration looks where the danger is (issue 36)", { timeout: 120_000 }, () => {
  it("sees the calls made inside a sub-agent, and names their depth", async () => {
    // Declared read-only, so the parent runs it unasked; its child deploys, unguarded.
    const agent = ({ provider }: ExplorationSetup) => {
      const deploy = defineTool({
        name: "deploy",
        description: "Deploys",
        parameters: z.object({ env: z.string() }),
        execute: () => "deployed",
      });
      const ops = subAgentTool({
        name: "ops",
        description: "Looks into operations",
        readOnly: true,
        provider: scriptedModel(
          [{ toolCalls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "ok" }],
          {
            requireAllSteps: false,
            whenExhausted: "error",
          },
        ),
        tools: [deploy],
      });
      // Deploys are allowed without asking (the parent's rules may name its sub-agents' tools), not approved.
      return { provider, tools: [ops], permissions: createPermissions({ rules: { allow: ["deploy"] } }) };
    };
    const exploration = await exploreAgent({
      agent,
      properties: [approvalRequired((call) => call.name === "deploy"), callsAnsweredOnce()],
      maxCalls: 1,
    });
    expect(exploration.failures.map((f) => f.property)).toEqual([
      "no tool that needs approval runs unapproved",
    ]);
    const [failure] = exploration.failures;
    expect(failure!.problems).toEqual([
      expect.stringMatching(
        /^deploy \S+ \(depth 1, inside ops p1_1\) ran without approval \(\{"env":"prod"\}\)$/,
      ),
    ]);
    expect(failure!.description).toMatch(
      /events of the sub-agent of ops p1_1: agent_start → .*tool_execution_start/,
    );

    const replay = await replayPath({ agent }, failure!.path);
    expect(replay.calls.map((c) => [c.name, c.depth, c.parent?.name, c.executed])).toEqual([
      ["ops", 0, undefined, true],
      ["deploy", 1, "ops", true],
    ]);
    expect(replay.calls.map(describeCall)[1]).toMatch(/^deploy \S+ \(depth 1, inside ops p1_1\)$/);
    expect(replay.subAgents).toHaveLength(1);
  });

  it("tries every parameter by its schema: a refund's amount above its approval threshold", async () => {
    const refund = (needsApprovalAbove: number) =>
      defineTool({
        name: "refund",
        description: "Refunds a customer",
        parameters: z.object({ amount: z.number(), currency: z.enum(["usd", "eur"]).optional() }),
        needsApproval: (args) => args.amount > needsApprovalAbove,
        execute: () => "refunded",
      });
    const policy = approvalRequired((call) => call.name === "refund" && (call.args.amount as number) > 100);
    const tried: { amount: number; approval?: string }[] = [];
    const recorder: PathProperty = {
      name: "records",
      check: ({ calls }) => {
        for (const c of calls) tried.push({ amount: c.args.amount as number, approval: c.approval });
      },
    };
    const right = await exploreAgent({
      agent: ({ provider }) => ({ provider, tools: [refund(100)] }),
      properties: [policy, recorder],
      maxCalls: 1,
    });
    right.assertHolds();
    // Above 100 it asked, and both answers were explored.
    const above = tried.filter((t) => t.amount > 100);
    expect(above.length).toBeGreaterThan(0);
    expect(new Set(above.map((t) => t.approval))).toEqual(new Set(["approved", "denied", undefined]));
    expect(tried.some((t) => t.amount <= 100)).toBe(true);

    // A threshold set ten times too high lets a refund above 100 run unasked: caught.
    const wrong = await exploreAgent({
      agent: ({ provider }) => ({ provider, tools: [refund(1_000)] }),
      properties: [policy],
      maxCalls: 1,
    });
    expect(wrong.failures[0]!.problems).toEqual([
      expect.stringMatching(/^refund p1_1 ran without approval \(\{"amount":1000/),
    ]);
  });

  it("builds arguments from each parameter's schema: bounds and neighbours, enum members, optional fields, long strings", () => {
    const tool = defineTool({
      name: "book",
      description: "Books seats",
      parameters: z.object({
        seats: z.number().int().min(1).max(9),
        cabin: z.enum(["economy", "business", "first"]),
        note: z.string().max(20).optional(),
        express: z.boolean().optional(),
      }),
      execute: () => "booked",
    });
    const calls = adversarialCalls([tool], { cwd: "$CWD", outside: "$OUTSIDE" });
    const values = (name: string) =>
      calls.filter((c) => c.label.startsWith(`${name}:`)).map((c) => c.arguments[name]);
    expect(calls[0]).toEqual({ name: "book", arguments: { seats: 1, cabin: "economy" }, label: "benign" });
    expect(values("seats")).toEqual(expect.arrayContaining([0, 2, 8, 9, 10, -1, 1.5, 1_000]));
    expect(values("cabin")).toEqual(["business", "first"]);
    expect(values("note")).toEqual(["hello", "", "x".repeat(20), "x".repeat(21)]);
    expect(values("express")).toEqual([false, true]);
    // Absent in the plain call, present in others; one parameter changed at a time.
    expect(calls.find((c) => c.label === "note: present (hello)")!.arguments).toEqual({
      seats: 1,
      cabin: "economy",
      note: "hello",
    });
  });

  it("runs each path in a fresh workspace: a call left running by an aborted path is blamed on its own path", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const agent = ({ provider, outside }: ExplorationSetup) => ({
      provider,
      tools: [
        defineTool({
          name: "sync",
          description: "Syncs, ignoring its abort signal: cut off, it still writes its log, outside",
          parameters: z.object({}),
          readOnly: true,
          execute: async (_args, ctx) => {
            await sleep(300);
            if (ctx.signal.aborted) writeFileSync(join(outside, "late.txt"), "late");
            return "synced";
          },
        }),
        defineTool({
          name: "pause",
          description: "Waits a little",
          parameters: z.object({}),
          readOnly: true,
          execute: async () => {
            await sleep(800);
            return "waited";
          },
        }),
      ],
    });
    const exploration = await exploreAgent({ agent, properties: [noWriteOutsideWorkspace()], maxCalls: 1 });
    const [failure] = exploration.failures;
    expect(failure!.path).toMatchObject({
      abortAt: "execution",
      turns: [[expect.objectContaining({ name: "sync" })]],
    });
    expect(failure!.problems).toEqual([
      "created outside/late.txt (during sync p1_1, still running after its run ended)",
    ]);
  });

  it("says when the agent_end of a run that never ended was the kit's own abort", async () => {
    const hang = defineTool({
      name: "hang",
      description: "Never answers",
      parameters: z.object({}),
      readOnly: true,
      execute: () => new Promise<string>(() => {}),
    });
    const exploration = await exploreAgent({
      agent: ({ provider }) => ({ provider, tools: [hang] }),
      properties: [runEnds()],
      runTimeoutMs: 200,
    });
    const [problem] = exploration.failures[0]!.problems;
    expect(problem).toMatch(
      /^no agent_end; the last events were .*tool_execution_start; then the kit aborted the run \(.*agent_end\)$/,
    );
    expect(exploration.failures[0]!.events).toContain("(the kit aborts the run)");
  });
});
