import type { Agent } from "../agent/create-agent.js";
import { textOf } from "../core/messages.js";
import type { Session } from "./session-store.js";

/**
 * Saves an agent's session as it goes: every event (text deltas aside: the finished message is in
 * `message_end`) appended to `events.jsonl`, and the persisted machine snapshot rewritten atomically
 * whenever the machine changes state. Returns a function that stops recording.
 *
 * A failing disk never stops the agent: the first write error is reported through `onError` and
 * recording goes on trying.
 *
 * @example
 * ```ts
 * const stop = recordSession(agent, store.create({ cwd, provider: "anthropic", model }));
 * ```
 */
export function recordSession(
  agent: Agent,
  session: Session,
  onError: (error: Error) => void = () => {},
): () => void {
  let reported = false;
  const guarded = (write: () => void) => {
    try {
      write();
    } catch (error) {
      if (!reported) onError(error as Error);
      reported = true;
    }
  };

  // The store writes a snapshot only when it changed, with its images kept apart (a screenshot is
  // not serialised again on every change).
  const save = () => guarded(() => session.saveSnapshot(agent.getPersistedSnapshot()));

  const events = agent.events$.subscribe((event) => {
    if (event.type === "message_update") return;
    guarded(() => session.appendEvent({ ...event, at: Date.now() }));
    if (event.type === "agent_start") guarded(() => session.updateMeta({ status: "running" }));
    if (event.type === "message_end" && event.message.role === "user" && !session.meta.title) {
      const content = event.message.content;
      const text = typeof content === "string" ? content : textOf(content);
      guarded(() => session.updateMeta({ title: text.replace(/\s+/g, " ").slice(0, 80) }));
    }
    if (event.type === "agent_end") {
      save();
      guarded(() => session.updateMeta({ status: "idle" }));
    }
  });
  const snapshots = agent.snapshot$.subscribe(() => save());
  return () => {
    events.unsubscribe();
    snapshots.unsubscribe();
  };
}
