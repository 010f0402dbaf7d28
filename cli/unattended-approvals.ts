import type { Agent } from "../agent/create-agent.js";
import type { Tool } from "../tools/define-tool.js";
import { createPermissions, type PermissionMode } from "../tools/permissions.js";
import { visibleText } from "./terminal-text.js";

/** Exit status of a run stopped because a call needed an approval and there was no one to ask. */
export const EXIT_NEEDS_APPROVAL = 4;

/** A call refused because it needed an approval no one could give. */
export interface RefusedCall {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** What the model reads as the refused call's result. */
export const UNATTENDED_DENIAL =
  "Not run: this call needs the user's approval and no one can be asked (agent-machine runs without a terminal). The run stops here; the user is told how to allow it.";

/**
 * Ends a run that asks for an approval when no one can answer (`--print`, `--json`, a pipe): the
 * call is denied (so the transcript answers every call and the session resumes as it is) and the
 * run is aborted at once, instead of waiting for an answer that never comes — a wait Node ends
 * silently with exit status 13 once nothing else is left to do. The caller reads `refused()` to say
 * which call it was and how to allow it ({@link refusalMessage}), and exits with
 * {@link EXIT_NEEDS_APPROVAL}.
 *
 * @example
 * ```ts
 * const guard = refuseUnattendedApprovals(agent);
 * await agent.prompt("fix it");
 * if (guard.refused().length) process.exitCode = EXIT_NEEDS_APPROVAL;
 * guard.stop();
 * ```
 */
export function refuseUnattendedApprovals(agent: Agent): {
  refused(): readonly RefusedCall[];
  stop(): void;
} {
  const refused: RefusedCall[] = [];
  const subscription = agent.events$.subscribe((event) => {
    if (event.type !== "approval_requested") return;
    refused.push({ toolCallId: event.toolCallId, toolName: event.toolName, args: event.args });
    try {
      agent.deny(event.toolCallId, UNATTENDED_DENIAL);
    } catch {
      // Already decided (the run was aborted meanwhile): the abort answers it.
    }
    // One refusal ends the run: the model going on without the step it asked for is not what the
    // user who chose this mode wanted, and a second refusal would only say the same.
    if (refused.length === 1) agent.abort();
  });
  return {
    refused: () => refused,
    stop: () => subscription.unsubscribe(),
  };
}

/** `'text'` for a POSIX shell. */
function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `--allow` rule that lets exactly this call run under the given mode and rules, if there is
 * one: `bash(npm test)` for a simple command (a chained one is never allowed by a rule),
 * `write_file(src/a.ts)` for a file, else the tool's name. Checked with the permissions
 * themselves, so a rule is only suggested when it would work.
 */
export function ruleAllowing(
  call: RefusedCall,
  tool: Tool | undefined,
  setup: { mode: PermissionMode; allow: readonly string[]; cwd: string },
): string | undefined {
  if (!tool) return undefined;
  const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>;
  const candidates: string[] = [];
  if (typeof a.command === "string") candidates.push(`${call.toolName}(${a.command.trim()})`);
  else if (typeof a.path === "string") candidates.push(`${call.toolName}(${a.path})`);
  candidates.push(call.toolName);
  for (const rule of candidates) {
    // A rule with a newline or parentheses in its pattern cannot be written back as one.
    if (/[\n\r]/.test(rule)) continue;
    try {
      const permissions = createPermissions({
        mode: setup.mode,
        cwd: setup.cwd,
        rules: { allow: [...setup.allow, rule] },
      });
      const decision = permissions.check({
        toolCall: { type: "toolCall", id: call.toolCallId, name: call.toolName, arguments: a },
        tool,
        args: call.args,
      });
      if (!(decision instanceof Promise) && decision.behavior === "allow") return rule;
    } catch {
      // Not a rule the permissions take: try the next.
    }
  }
  return undefined;
}

/** The call as one line of text, its invisible and control characters shown (`\u202E`, `⏎`). */
function callText(call: RefusedCall): string {
  const a = (call.args && typeof call.args === "object" ? call.args : {}) as Record<string, unknown>;
  const shown =
    typeof a.command === "string"
      ? a.command
      : typeof a.path === "string"
        ? a.path
        : (JSON.stringify(call.args) ?? "");
  return visibleText(shown, { newlines: "mark" });
}

/**
 * What the command prints when it stopped a run for an approval no one could give: the call, why,
 * that the session is saved and how to go on, and how to allow the call next time (a rule, the
 * mode, or the interactive session).
 *
 * @example
 * ```ts
 * io.stderr.write(refusalMessage(call, { rule: "bash(npm test)", mode: "acceptEdits", sessionId }));
 * ```
 */
export function refusalMessage(
  call: RefusedCall,
  options: { rule?: string; mode: PermissionMode; sessionId: string },
): string {
  const ways = [
    ...(options.rule
      ? [
          `--allow ${shellQuote(options.rule)} (${options.rule.includes("(") ? "this call" : `every ${call.toolName} call`})`,
        ]
      : []),
    ...(call.toolName === "write_file" || call.toolName === "edit_file"
      ? options.mode === "acceptEdits"
        ? []
        : ["--permission-mode acceptEdits (file edits)"]
      : []),
    "--permission-mode bypass (every call)",
  ];
  return [
    `agent-machine: ${call.toolName} needs approval and there is no terminal to ask (permission mode "${options.mode}"):`,
    `  ${call.toolName}: ${callText(call)}`,
    `The call was refused and the run stopped; session ${options.sessionId} is saved (go on with --resume ${options.sessionId}).`,
    `To let it run, pass ${ways.join(", or ")}; or run agent-machine in a terminal, without --print or --json, to be asked.`,
  ].join("\n");
}
