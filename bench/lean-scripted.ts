import { type Provider, type Script, scripted } from "../index.js";

/**
 * `scripted(script, { record: false })` for long benchmark runs, handing the scripted provider an
 * empty transcript. The scripted provider's own walk over the messages is skipped, since its usage
 * estimate reads the whole request on every call and would turn a 2,000-turn run quadratic for both
 * runtimes alike. Each runtime still converts its transcript for the model as it would for a real
 * one: pi-agent-core runs its `convertToLlm` over the whole transcript every turn; agent-machine
 * converts the new messages only, and copies them into the request when a provider reads them
 * (this one does not; a real provider does, and then serializes them all anyway). Steps must carry
 * their own `usage`, and the script must not read `request.messages`.
 *
 * @example
 * ```ts
 * const provider = leanScripted((_request, call) => (call < 9 ? { toolCalls: [{ name: "noop" }] } : { text: "done" }));
 * ```
 */
export function leanScripted(script: Script): Provider {
  const inner = scripted(script, { record: false });
  return {
    id: inner.id,
    model: inner.model,
    // Not `{ ...request }`: that would read (and so copy) the messages this provider never needs.
    stream: (request, signal) =>
      inner.stream({ systemPrompt: request.systemPrompt, tools: request.tools, messages: [] }, signal),
  };
}

/**
 * Hands a provider's events on in bursts: after every `burst` events the stream waits for the
 * next turn of the event loop (`setImmediate`), as a network stream does between socket reads.
 * Without it an in-memory source can run ahead of a push-based consumer without bound.
 *
 * @example
 * ```ts
 * const provider = inBursts(leanScripted([{ text: "long answer" }]), 100);
 * ```
 */
export function inBursts(provider: Provider, burst: number): Provider {
  return {
    id: provider.id,
    model: provider.model,
    async *stream(request, signal) {
      let sent = 0;
      for await (const event of provider.stream(request, signal)) {
        yield event;
        if (++sent % burst === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}
