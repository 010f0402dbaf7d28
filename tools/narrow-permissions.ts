import type { PermissionChecker, PermissionDecision } from "../core/options.js";

type MaybePromise<T> = T | Promise<T>;

function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

const STRICTNESS: Record<PermissionDecision["behavior"], number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The permissions of a sub-agent: what its parent allows, narrowed by its own checker. A call runs
 * only if both allow it; either one's deny is a deny (the parent's reason says it is inherited),
 * and either one's ask is an ask. So a sub-agent never has more rights than its parent: the
 * parent's deny rules and mode (plan, deny, default...) hold inside it, read live, so a mode change
 * or an "always" answer of the parent applies to its running sub-agents too. `subAgentTool` does
 * this by itself; it is exported for apps that run child agents of their own.
 *
 * @example
 * ```ts
 * const child = createAgent({
 *   provider,
 *   tools,
 *   permissions: narrowPermissions(parentPermissions, createPermissions({ rules: { deny: ["bash"] } })),
 * });
 * ```
 */
export function narrowPermissions(
  parent: PermissionChecker | undefined,
  own: PermissionChecker | undefined,
): PermissionChecker | undefined {
  if (!parent) return own;
  const inherited = (decision: PermissionDecision): PermissionDecision =>
    decision.behavior === "deny"
      ? {
          behavior: "deny",
          reason: `${decision.reason} (a permission of the parent agent, which its sub-agents inherit)`,
        }
      : decision;
  return {
    // Only the sub-agent's own rules are about its tools: the parent's name the parent's as well.
    ...(own?.checkToolNames && { checkToolNames: (names) => own.checkToolNames!(names) }),
    check(request) {
      return andThen(parent.check(request), (fromParent) => {
        if (fromParent.behavior === "deny" || !own) return inherited(fromParent);
        return andThen(own.check(request), (fromOwn) =>
          STRICTNESS[fromOwn.behavior] >= STRICTNESS[fromParent.behavior] ? fromOwn : fromParent,
        );
      });
    },
  };
}
