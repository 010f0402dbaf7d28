// Run by visualizer-exit.slow.test.ts: uses every visualizer server, closes them, and must then exit
// on its own (no timer, socket or server left holding the event loop).
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createAgent,
  createStatelyInspector,
  recordEvents,
  scripted,
  visualize,
  visualizeRecording,
} from "../index.js";

const inspector = await createStatelyInspector();
const agent = createAgent({ provider: scripted([{ text: "bye" }]), inspect: inspector.inspect });
const server = await visualize(agent, { port: 0 });
const file = join(await mkdtemp(join(tmpdir(), "agent-machine-exit-")), "run.jsonl");
const recorder = recordEvents(agent, file);
await fetch(server.url);
await agent.prompt("Hello");
await recorder.close();
const replay = await visualizeRecording(file);
await fetch(replay.url);
await replay.close();
await server.close();
await inspector.stop();
agent.stop();
console.log("closed");
