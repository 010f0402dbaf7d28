import { TerminalError } from "@restatedev/restate-sdk";
import type { AgentOptions } from "../core/options.js";

/** The agent options of a session, as every object of the durable service reads them. */
export interface SessionOptions {
  /**
   * The session's options inside a handler: a configuration error fails the call with a 500
   * (`TerminalError`), it is not retried.
   */
  of(sessionId: string): AgentOptions;
}

/**
 * Resolves the `agent` option of `createAgentServices` per session, refusing what a durable session
 * cannot carry (a snapshot: its state lives in Restate; a parent actor: it is a root agent). Static
 * options are checked here, once, so a bad configuration fails at start rather than in the first run.
 *
 * @example
 * ```ts
 * const options = createSessionOptions({ provider, tools });
 * const { inputFilters } = options.of("session-1");
 * ```
 */
export function createSessionOptions(
  agent: AgentOptions | ((sessionId: string) => AgentOptions),
): SessionOptions {
  const resolve = (sessionId: string): AgentOptions => {
    const resolved = typeof agent === "function" ? agent(sessionId) : agent;
    if (resolved.snapshot !== undefined) {
      throw new Error(
        "A durable session keeps its state in Restate: the agent options must not carry a snapshot",
      );
    }
    if (resolved.parentActor !== undefined) {
      throw new Error("A durable session is a root agent: the agent options must not carry a parentActor");
    }
    return resolved;
  };
  if (typeof agent !== "function") resolve("");
  return {
    of(sessionId) {
      try {
        return resolve(sessionId);
      } catch (error) {
        throw new TerminalError(
          `The agent options of session "${sessionId}" are invalid: ${errorText(error)}`,
          { errorCode: 500 },
        );
      }
    },
  };
}

/**
 * The message of whatever was thrown, for an error a handler answers with.
 *
 * @example
 * ```ts
 * errorText(new Error("boom")); // "boom"
 * ```
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
