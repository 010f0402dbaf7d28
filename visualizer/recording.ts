import { dirname } from "node:path";
import type { Agent } from "../agent/create-agent.js";
import { followAgent, type VisualizerMessage } from "./wire.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

/** A recording in progress. */
export interface Recorder {
  /** The file being written. */
  readonly path: string;
  /** Stops recording and resolves once every line is on disk. */
  close(): Promise<void>;
}

/**
 * Appends everything an agent does to a `.jsonl` file, one JSON line per message with a timestamp
 * `t` (ms since the epoch): a `hello` line, then `event` lines (every agent event, `message_update`
 * as its delta), `state` lines (the machine's state value when it changes) and `tool_state` lines.
 * The visualizer page replays such a file step by step (`visualizeRecording`, or its file picker).
 * Secrets are redacted by key name and huge strings cut, as on the live page.
 *
 * @example
 * ```ts
 * const recorder = recordEvents(agent, ".agent-machine/runs/today.jsonl");
 * await agent.prompt("Hi");
 * await recorder.close();
 * ```
 */
export function recordEvents(agent: Agent, path: string): Recorder {
  const ready = nodeFsPromises().mkdir(dirname(path), { recursive: true });
  const lines: string[] = [];
  let stream: ReturnType<typeof import("node:fs").createWriteStream> | undefined;
  let failure: Error | undefined;

  const opened = ready.then(() => {
    stream = nodeFs().createWriteStream(path, { flags: "a" });
    stream.on("error", (error) => {
      failure = error;
    });
    if (lines.length) stream.write(lines.splice(0).join(""));
  });
  opened.catch((error: Error) => {
    failure = error;
  });

  const write = (message: VisualizerMessage) => {
    const line = `${JSON.stringify(message)}\n`;
    if (stream && !failure) stream.write(line);
    else if (!failure) lines.push(line);
  };
  write({ kind: "hello", t: Date.now(), agentId: agent.id, mode: "replay" });
  // Coalescing keeps files small; the deltas it joins arrived within a few milliseconds of each other.
  const stop = followAgent(agent, write, { coalesceMs: 40 });

  let closing: Promise<void> | undefined;
  return {
    path,
    close() {
      closing ??= (async () => {
        stop();
        await opened.catch(() => undefined);
        const open = stream;
        if (open && !failure) {
          if (lines.length) open.write(lines.splice(0).join(""));
          await new Promise<void>((resolve) => open.end(resolve));
        }
        if (failure) throw new Error(`Could not write the recording ${path}: ${failure.message}`);
      })();
      return closing;
    },
  };
}

/**
 * Reads a recording written by {@link recordEvents}. Lines that are not valid JSON messages are
 * reported with their line number, not skipped silently.
 *
 * @example
 * ```ts
 * const messages = await readRecording("run.jsonl");
 * const events = messages.filter((m) => m.kind === "event").map((m) => m.event.type);
 * ```
 */
export async function readRecording(path: string): Promise<VisualizerMessage[]> {
  return parseRecording(await nodeFsPromises().readFile(path, "utf8"), path);
}

/** Parses the text of a recording (see {@link readRecording}). */
export function parseRecording(text: string, source = "recording"): VisualizerMessage[] {
  const messages: VisualizerMessage[] = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      throw new Error(`${source}:${index + 1}: not JSON (${(error as Error).message})`, { cause: error });
    }
    if (isSessionLogLine(message)) {
      // A CLI session log (.agent-machine/sessions/<id>/events.jsonl): agent events stamped `at`.
      const { at, ...event } = message;
      if (!SESSION_ONLY_RECORDS.has(event.type))
        messages.push({ kind: "event", t: at, event } as VisualizerMessage);
      continue;
    }
    if (!isMessage(message)) {
      throw new Error(
        `${source}:${index + 1}: not a visualizer message (it needs "kind" and a numeric "t") nor a session log line`,
      );
    }
    messages.push(message);
  }
  return messages;
}

/** Records a CLI session log holds besides agent events. */
const SESSION_ONLY_RECORDS = new Set(["session_resumed"]);

function isSessionLogLine(value: unknown): value is { type: string; at: number } {
  if (!value || typeof value !== "object") return false;
  const { type, at, kind } = value as { type?: unknown; at?: unknown; kind?: unknown };
  return typeof type === "string" && typeof at === "number" && kind === undefined;
}

function isMessage(value: unknown): value is VisualizerMessage {
  if (!value || typeof value !== "object") return false;
  const { kind, t } = value as { kind?: unknown; t?: unknown };
  return typeof kind === "string" && typeof t === "number";
}
