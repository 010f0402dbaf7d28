// Every message a page received (live) or loaded (replay), so it can show any moment again: the model
// after the first n messages is rebuilt from the nearest checkpoint. Old messages beyond `limit` are
// folded into the starting model, as the server does for late pages.
import { apply, cloneModel, emptyModel } from "./model.js";
import { createRunSpans } from "./run-spans.js";

const CHECKPOINT_EVERY = 500;
let histories = 0;

/**
 * @param {{ limit?: number }} options
 */
export function createHistory({ limit = 50_000 } = {}) {
  let base = emptyModel();
  /** Absolute index of entries[0]: messages before it live only in `base`. */
  let offset = 0;
  const entries = [];
  /** Checkpoints by absolute index: the model after that many messages. */
  const checkpoints = new Map();
  /** Each run's calls, waits and marks on its time axis, for the scrubber; kept past `limit`. */
  const runs = createRunSpans();

  return {
    /** Tells one history from another (a reconnect or a recording starts a new one). */
    id: String(++histories),
    runs,
    /** Absolute index just past the last message. */
    get end() {
      return offset + entries.length;
    },
    /** The first index that can still be shown exactly. */
    get start() {
      return offset;
    },
    /** The message at an absolute index (undefined once folded away). */
    at(index) {
      return entries[index - offset];
    },
    push(message) {
      runs.push(message, offset + entries.length);
      entries.push(message);
      while (entries.length > limit) {
        apply(base, entries.shift(), { index: offset });
        checkpoints.delete(offset);
        offset++;
      }
    },
    /** The model after the first `position` messages. */
    modelAt(position) {
      position = Math.max(offset, Math.min(this.end, position));
      let from = offset;
      let model = null;
      for (const [at, checkpoint] of checkpoints) {
        if (at <= position && at > from) {
          from = at;
          model = checkpoint;
        }
      }
      model = cloneModel(model ?? base);
      for (let index = from; index < position; index++) {
        apply(model, entries[index - offset], { index });
        if ((index + 1) % CHECKPOINT_EVERY === 0 && !checkpoints.has(index + 1)) {
          checkpoints.set(index + 1, cloneModel(model));
        }
      }
      return model;
    },
  };
}
