// What a durable run journals (issue 44): `npx tsx bench/durable-journal.ts` runs a one-turn and a
// five-turn scripted prompt (each one tool call a turn, then an answer) ten times per session, and
// prints the journal commands of the session's 1st, 2nd and 10th run as the Restate server kept them
// (sys_journal, with the service's journal retained), counted by kind: a long-lived session's run
// should cost what its second did, not grow with the runs before it.
import { z } from "zod";
import { type AgentOptions, defineTool, type ScriptedStep, scripted } from "../index.js";
import {
  createAgentServices,
  createSessionClient,
  findRestateServerBinary,
  registerDeployment,
  serveAgents,
  startRestateServer,
} from "../restate.js";

if (!findRestateServerBinary()) {
  console.log("durable journal: skipped (no restate-server binary)");
  process.exit(0);
}

/** `turns` model calls: one instant tool call each but the last, which answers. */
function agentOf(turns: number): AgentOptions {
  const noop = defineTool({
    name: "noop",
    description: "Does nothing",
    parameters: z.object({ turn: z.number() }),
    readOnly: true,
    execute: ({ turn }) => `ok ${turn}`,
  });
  const provider = scripted(
    (request): ScriptedStep => {
      const answers = request.messages.filter((m) => m.role === "assistant").length;
      const step = answers % turns;
      return step < turns - 1
        ? { toolCalls: [{ id: `c${answers}`, name: "noop", arguments: { turn: step } }] }
        : { text: "done" };
    },
    { record: false },
  );
  return { provider, tools: [noop] };
}

const restate = await startRestateServer();
const services = createAgentServices({ agent: (id) => agentOf(Number(id.split("-")[0])) });
const endpoint = await serveAgents({ services, logger: () => {} });
await registerDeployment({ adminUrl: restate.adminUrl, uri: endpoint.url });
for (const service of ["AgentSession", "SessionInbox"]) {
  const response = await fetch(new URL(`/services/${service}`, restate.adminUrl), {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ journal_retention: "1h" }),
  });
  if (!response.ok) throw new Error(`PATCH ${service}: ${response.status} ${await response.text()}`);
}
const client = createSessionClient({ url: restate.ingressUrl });

type Entry = { Command?: Record<string, { name?: string; key?: string }>; Notification?: unknown };

async function journalOf(invocationId: string): Promise<string[]> {
  const rows = await restate.query<{ entry_lite_json: string }>(
    `SELECT entry_lite_json FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`,
  );
  const commands: string[] = [];
  for (const row of rows) {
    const entry = JSON.parse(row.entry_lite_json) as Entry;
    if (!entry.Command) continue;
    const [kind, body] = Object.entries(entry.Command)[0]!;
    const label = body?.name ?? body?.key;
    commands.push(label ? `${kind}(${label})` : kind);
  }
  return commands;
}

const summary = (commands: string[]) => {
  const counts = new Map<string, number>();
  for (const c of commands) {
    const kind = c.split("(")[0]!;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k} ${n}`).join(", ");
};

const verbose = process.env.VERBOSE === "1";
for (const turns of [1, 5]) {
  const sessionId = `${turns}-${Date.now()}`;
  for (let run = 1; run <= 10; run++) {
    const sent = await client.send(sessionId, "go");
    const result = await client.result(sent);
    if (result.reason !== "stop") throw new Error(`run ended with ${result.reason}`);
    if (run !== 1 && run !== 2 && run !== 10) continue;
    const commands = await journalOf(sent.invocationId);
    console.log(`${turns} turn(s), run ${run}: ${commands.length} commands (${summary(commands)})`);
    if (verbose) console.log(`  ${commands.join("\n  ")}`);
  }
}
await endpoint.close();
await restate.stop();
process.exit(0);
