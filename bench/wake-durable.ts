// Wake to first model call on Restate: the time from an event (`wakes.deliverEvent`) or a
// schedule's slot to the first model call of the run it wakes, against the time from a prompt
// (`client.send`) to its own first model call. A local Restate server and the service in this
// process, as bench/durable-stream.ts runs them.
// Usage: npx tsx bench/wake-durable.ts   (BENCH_RUNS=n samples per figure, default 30)
import type { Provider } from "../index.js";
import { scripted } from "../index.js";
import {
  createAgentServices,
  createSessionClient,
  createWakeClient,
  registerDeployment,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { median } from "./harness.js";

const RUNS = Number(process.env.BENCH_RUNS) || 30;

/** Notes when a model call starts: the end of each sample. */
let onModelCall: (() => void) | undefined;
const inner = scripted(() => ({ text: "ok" }), { record: false });
const provider: Provider = {
  id: inner.id,
  model: inner.model,
  stream(request, signal) {
    onModelCall?.();
    return inner.stream(request, signal);
  },
};

const restate = await startRestateServer();
const services = createAgentServices({ agent: { provider } });
const server = await serveAgents({ services, port: 0, logger: () => {} });
await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
const client = createSessionClient({ url: restate.ingressUrl });
const wakes = createWakeClient({ url: restate.ingressUrl });

/** Ms from the time `start` returns to the first model call it causes, and waits for the run to end. */
async function sample(sessionId: string, start: () => Promise<number>): Promise<number> {
  let called: number | undefined;
  const first = new Promise<void>((resolve) => {
    onModelCall = () => {
      called ??= Date.now();
      resolve();
    };
  });
  const from = await start();
  await first;
  onModelCall = undefined;
  // The run ends before the next sample (the next prompt or wake would wait for it).
  for (;;) {
    const status = await client.status(sessionId);
    if (status.state === "idle" && status.lastRun) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return called! - from;
}

const prompt: number[] = [];
const event: number[] = [];
const slot: number[] = [];
try {
  // Warm-up: each session has run once (a woken session is an existing one).
  for (let i = 0; i < RUNS; i++) await client.prompt(`w${i}`, "Hi");
  for (let i = 0; i < RUNS; i++) {
    prompt.push(
      await sample(`w${i}`, async () => {
        const from = Date.now();
        await client.send(`w${i}`, "Hello again");
        return from;
      }),
    );
    event.push(
      await sample(`w${i}`, async () => {
        const from = Date.now();
        await wakes.deliverEvent(`w${i}`, { id: `e${i}`, text: "CI failed on main" });
        return from;
      }),
    );
    slot.push(
      await sample(`w${i}`, async () => {
        const at = Date.now() + 150;
        await wakes.schedule(`w${i}`, { at, message: "Check the deploy" });
        return at;
      }),
    );
  }
} finally {
  await server.close();
  await restate.stop();
}

const p = median(prompt);
const row = (name: string, values: number[]) =>
  `${name.padEnd(44)} ${median(values).toFixed(1).padStart(7)} ms  ${(median(values) / p).toFixed(2)}× a prompt's start`;
console.log(`wake to first model call on Restate (median of ${RUNS})`);
console.log(`${"a prompt (client.send) to its first model call".padEnd(44)} ${p.toFixed(1).padStart(7)} ms`);
console.log(row("an event (wakes.deliverEvent)", event));
console.log(row("a schedule's slot (its time)", slot));
// The slot's delayed call is set to come a little early (SLOT_LEAD_MS): its run must never start before the slot.
console.log(
  `${"earliest slot run, from its time".padEnd(44)} ${Math.min(...slot)
    .toFixed(1)
    .padStart(7)} ms (never below 0)`,
);
