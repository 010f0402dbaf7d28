import type { ProviderEvent, ProviderRequest } from "../providers/provider.js";
import { type ScriptedProvider, type ScriptedStep, scripted } from "../providers/scripted.js";
import { TestKitError } from "./test-kit-error.js";

/** One answer of a {@link scriptedModel}: a {@link ScriptedStep} that may also stall or check its request. */
export interface ModelStep extends ScriptedStep {
  /**
   * The stream goes silent and stays silent until the agent aborts it (its stall watchdog, a
   * deadline, `agent.abort()`): `true` before the first event, `"afterText"` once the step's
   * thinking and text have streamed.
   */
  stall?: true | "afterText";
  /** Checks what the model is sent at this step; a throw fails the test (see {@link ScriptedModel.verify}). */
  expectRequest?: (request: ProviderRequest) => void;
}

/** A list of steps, one per model call, or a function of the request and the call's index (0-based). */
export type ModelScript =
  readonly ModelStep[] | ((request: ProviderRequest, call: number) => ModelStep | Promise<ModelStep>);

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  id?: string;
  model?: string;
  /**
   * What a model call past the end of a step list does. `"fail"` (default): the call ends with an
   * `api` error the run reports, and {@link ScriptedModel.verify} throws. `"error"`: the same
   * error, but `verify` accepts it (tests of how the agent takes a failing model).
   */
  whenExhausted?: "fail" | "error";
  /** `verify` throws when steps of a list were never played. Default `true`. */
  requireAllSteps?: boolean;
}

/** A scripted model: a provider for tests that records every request and checks it was used as written. */
export interface ScriptedModel extends ScriptedProvider {
  /** Every request the agent sent, in order (the system prompt, messages and tools the model saw). */
  readonly requests: ProviderRequest[];
  /** Model calls made so far. */
  readonly calls: number;
  /** Steps of a list not played yet (always 0 for a function script). */
  readonly remaining: number;
  /** What went wrong so far: calls past the end of the script, failed `expectRequest` checks. */
  readonly problems: readonly string[];
  /**
   * Throws a {@link TestKitError} when the script was not used as written: a step never reached
   * (unless `requireAllSteps: false`), a call past the end (unless `whenExhausted: "error"`), a
   * failed `expectRequest`. `runAgent` calls it after every run.
   */
  verify(): void;
}

/**
 * A model for tests, played from a script: a list of steps (one per model call) or a function of
 * the request. It streams each answer as a real provider does, records every request, can fail,
 * stall or check what it is sent on demand, and fails the test when the script is not used as
 * written (a step never reached, a call past the end).
 *
 * @example
 * ```ts
 * const model = scriptedModel([
 *   { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
 *   { text: "5", expectRequest: (r) => assert.equal(r.messages.at(-1)?.role, "toolResult") },
 * ]);
 * const run = await runAgent({ provider: model, tools: [add] }, "2 + 3?");
 * model.verify(); // runAgent already did
 * ```
 */
export function scriptedModel(script: ModelScript, options: ScriptedModelOptions = {}): ScriptedModel {
  const problems: string[] = [];
  const listed = typeof script === "function" ? undefined : script;
  // Each call plays through a scripted provider of one step, whose own call counter stays in step
  // with ours: tool call ids are `call_<call>_<index>` as with `scripted()`.
  let current: ScriptedStep = {};
  const player = scripted(() => current, { id: options.id, model: options.model, record: false });
  const requests: ProviderRequest[] = [];

  const model: ScriptedModel = {
    id: player.id,
    model: player.model,
    requests,
    get calls() {
      return player.calls;
    },
    get remaining() {
      return listed ? Math.max(0, listed.length - player.calls) : 0;
    },
    problems,
    verify() {
      const found = [...problems];
      if (listed && options.requireAllSteps !== false && player.calls < listed.length) {
        found.push(
          `the script has ${listed.length} steps but the model was called ${player.calls} times: ` +
            `step ${player.calls + 1} was never reached`,
        );
      }
      if (found.length > 0) throw new TestKitError(`scriptedModel: ${found.join("; ")}`);
    },
    async *stream(request, signal) {
      const call = player.calls;
      requests.push(request);
      const step = await stepFor(script, request, call);
      if (!step) {
        const problem = `no step for model call ${call + 1} (the script has ${listed?.length ?? 0})`;
        // `verify()` names the model once for all its problems; the agent's error names it itself.
        if (options.whenExhausted !== "error") problems.push(problem);
        current = { error: { kind: "api", message: `scriptedModel: ${problem}` } };
      } else {
        checkRequest(step, request, call, problems);
        current = step.stall ? stallPrefix(step) : step;
      }
      const stall = step?.stall;
      for await (const event of player.stream(request, signal)) {
        // A stalling step holds back its end (and, stalling from the start, its start too).
        if (stall && (event.type === "done" || (stall === true && event.type === "start"))) continue;
        yield event;
        if (event.type === "error") return;
      }
      if (stall) yield* silence(signal);
    },
  };
  return model;
}

async function stepFor(script: ModelScript, request: ProviderRequest, call: number) {
  return typeof script === "function" ? await script(request, call) : script[call];
}

function checkRequest(step: ModelStep, request: ProviderRequest, call: number, problems: string[]): void {
  if (!step.expectRequest) return;
  try {
    step.expectRequest(request);
  } catch (error) {
    problems.push(`model call ${call + 1}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * What a stalling step streams before its silence: nothing (the `done` event of the one-step
 * player is held back by {@link silence}) or its thinking and text. Tool calls never stream.
 */
function stallPrefix(step: ModelStep): ScriptedStep {
  if (step.stall === "afterText")
    return { thinking: step.thinking, text: step.text, chunkSize: step.chunkSize };
  return {};
}

/** Waits, silent, until the agent aborts the stream; then reports the abort as a provider does. */
async function* silence(signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  if (!signal.aborted) {
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  yield { type: "error", kind: "aborted", message: "Request aborted" };
}
