// An approval card says what the tool does (issue 41, item 4): the approval_requested event that
// reaches the page (and a recording) carries the description of the tool it asks for, as the agent
// the call waits in knows it — after a handoff the new agent's tool, in a sub-agent the child's —
// with secrets redacted, like everything on the wire.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  createAgent,
  defineHandoff,
  defineTool,
  readRecording,
  recordEvents,
  scripted,
  subAgentTool,
} from "../index.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const refund = defineTool({
  name: "refund",
  description: "Refunds an amount to the customer's card",
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: ({ amount }) => `refunded ${amount}`,
});

/** Runs `prompt` while recording, approves every call as it waits; the recorded approval_requested events. */
async function recordedApprovals(agent: Agent, prompt: string) {
  const dir = await mkdtemp(join(tmpdir(), "am-desc-"));
  dirs.push(dir);
  const recorder = recordEvents(agent, join(dir, "run.jsonl"));
  agent.events$.subscribe((event) => {
    if (event.type === "approval_requested") queueMicrotask(() => agent.approve(event.toolCallId));
  });
  await agent.prompt(prompt);
  await recorder.close();
  const messages = await readRecording(join(dir, "run.jsonl"));
  return messages.flatMap((m) =>
    m.kind === "event" && m.event.type === "approval_requested" ? [m.event] : [],
  );
}

describe("an approval carries the tool's description to the page", () => {
  it("the agent's own tool, with a key in its description redacted", async () => {
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys the site (uses API_KEY=sk-live-0123456789abcdefghijklmnop)",
      parameters: z.object({ env: z.string() }),
      needsApproval: true,
      execute: () => "ok",
    });
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "c1", name: "deploy", arguments: { env: "prod" } }] },
        { text: "done" },
      ]),
      tools: [deploy],
    });
    const [approval] = await recordedApprovals(agent, "ship");
    expect(approval).toMatchObject({ toolName: "deploy" });
    expect((approval as { description?: string }).description).toMatch(/^Deploys the site \(uses API_KEY=/);
    expect(JSON.stringify(approval)).not.toContain("sk-live-0123456789");
  });

  it("after a handoff, the tool of the agent now active", async () => {
    const billing = defineHandoff({
      name: "billing",
      description: "Refunds and invoices",
      tools: [refund],
      provider: scripted([
        { toolCalls: [{ id: "r1", name: "refund", arguments: { amount: 5 } }] },
        { text: "refunded" },
      ]),
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]),
      handoffs: [billing],
    });
    const [approval] = await recordedApprovals(agent, "charged twice");
    expect(approval).toMatchObject({
      toolName: "refund",
      description: "Refunds an amount to the customer's card",
    });
  });

  it("in a sub-agent two levels down, the child's tool", async () => {
    const writer = subAgentTool({
      name: "writer",
      description: "Writes",
      tools: [refund],
      provider: scripted((_request, call) =>
        call === 0
          ? { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 20 } }] }
          : { text: "ok" },
      ),
    });
    const researcher = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [writer],
      provider: scripted((_request, call) =>
        call === 0
          ? { toolCalls: [{ id: "r1", name: "writer", arguments: { task: "refund" } }] }
          : { text: "ok" },
      ),
    });
    const agent = createAgent({
      provider: scripted((_request, call) =>
        call === 0
          ? { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "go" } }] }
          : { text: "ok" },
      ),
      tools: [researcher],
    });
    const [approval] = await recordedApprovals(agent, "handle it");
    expect(approval).toMatchObject({
      toolCallId: "p1/r1/w1",
      toolName: "refund",
      description: "Refunds an amount to the customer's card",
    });
  });
});
