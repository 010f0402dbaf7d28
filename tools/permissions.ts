import * as path from "node:path";
import type { PermissionChecker, PermissionDecision } from "../core/options.js";
import type { Tool, ToolCall } from "./define-tool.js";
import { globToRegExp } from "./internal/glob-pattern.js";

/**
 * How calls that no rule decides are treated.
 * - `default`: read-only tools run; every other tool asks.
 * - `acceptEdits`: file edits (`write_file`, `edit_file`, or `editTools`) run too; bash and the rest ask.
 * - `plan`: every mutating tool is denied with a message telling the model it is in plan mode.
 * - `bypass`: everything runs (deny rules still hold).
 * - `deny`: nothing asks: what would ask is denied (for runs with no one to approve).
 */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypass" | "deny";

/**
 * Rules as strings: `"read_file"` (the whole tool), `"bash(git status:*)"` (commands starting with
 * `git status`), `"bash(npm test)"` (exactly that command), `"edit_file(src/**)"` (a glob on the
 * workspace-relative path). Deny beats ask beats allow.
 */
export interface PermissionRules {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

/** Options of {@link createPermissions}. */
export interface PermissionsOptions {
  mode?: PermissionMode;
  rules?: PermissionRules;
  /** Workspace root, so absolute paths in arguments match relative rule globs. Default `process.cwd()`. */
  cwd?: string;
  /** Tools that `acceptEdits` lets run. Default `["write_file", "edit_file"]`. */
  editTools?: string[];
}

/** A {@link PermissionChecker} that can change at run time (the CLI's "always allow" answer). */
export interface Permissions extends PermissionChecker {
  readonly mode: PermissionMode;
  setMode(mode: PermissionMode): void;
  /** Adds a rule, e.g. `addRule("allow", "bash(npm test:*)")` or `addRule("allow", "write_file")`. */
  addRule(kind: keyof PermissionRules, rule: string): void;
  /** Shorthand for `addRule("allow", toolName)`: this tool no longer asks. */
  allowAlways(toolName: string): void;
  /** The current rules (copies). */
  rules(): Required<PermissionRules>;
}

interface ParsedRule {
  source: string;
  tool: string;
  /** Absent: the rule covers every call of the tool. */
  pattern?: string;
}

function parseRule(rule: string): ParsedRule {
  const match = /^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$/s.exec(rule);
  if (!match) throw new Error(`Invalid permission rule "${rule}": use "tool" or "tool(pattern)"`);
  const pattern = match[2]?.trim();
  return { source: rule, tool: match[1]!, pattern: pattern === "" || pattern === "*" ? undefined : pattern };
}

/** Shell operators that chain or nest commands: a prefix rule must not allow what follows them. */
const SHELL_CHAINING = /;|&&|\|\||\||`|\$\(|\n|&|>|</;

function splitShellCommands(command: string): string[] {
  return command
    .split(/;|&&|\|\||\||\n|&/)
    .map((part) => part.replace(/^[\s(]+|[\s)]+$/g, ""))
    .filter((part) => part !== "");
}

function commandMatches(pattern: string, command: string): boolean {
  const normalized = command.trim().replace(/\s+/g, " ");
  if (pattern.endsWith(":*")) {
    const prefix = pattern.slice(0, -2).trim();
    return normalized === prefix || normalized.startsWith(`${prefix} `);
  }
  return normalized === pattern.trim().replace(/\s+/g, " ");
}

function argumentOf(args: unknown, key: string): string | undefined {
  if (!args || typeof args !== "object") return undefined;
  const value = (args as Record<string, unknown>)[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * Creates the permission checker every call passes before it runs (`createAgent({ permissions })`).
 * Order: deny rules → plan mode → ask rules → allow rules → read-only tools → the mode's default.
 * Bash rules match the `command` argument: `git status:*` is a prefix (on a word boundary), anything
 * else the exact command. An allow rule matches only a simple command (no `;`, `&&`, `|`, `$(`,
 * redirections...), so `bash(git status:*)` does not allow `git status; rm -rf ~`; a deny rule matches
 * when any part of a chained command matches. Other tools' rules are globs on their `path` argument,
 * relative to `cwd`.
 *
 * @example
 * ```ts
 * const permissions = createPermissions({
 *   mode: "default",
 *   rules: { allow: ["bash(git status:*)", "edit_file(src/**)"], deny: ["bash(rm:*)"] },
 * });
 * permissions.allowAlways("write_file"); // the user answered "always"
 * const agent = createAgent({ provider, tools, permissions });
 * ```
 */
export function createPermissions(options: PermissionsOptions = {}): Permissions {
  let mode: PermissionMode = options.mode ?? "default";
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const editTools = new Set(options.editTools ?? ["write_file", "edit_file"]);
  const rules: Record<keyof PermissionRules, ParsedRule[]> = {
    allow: (options.rules?.allow ?? []).map(parseRule),
    ask: (options.rules?.ask ?? []).map(parseRule),
    deny: (options.rules?.deny ?? []).map(parseRule),
  };

  const relativePath = (input: string): string => {
    const absolute = path.resolve(cwd, input);
    const relative = path.relative(cwd, absolute).split(path.sep).join("/");
    return relative === "" ? "." : relative;
  };

  const matches = (rule: ParsedRule, tool: Tool, args: unknown, kind: keyof PermissionRules): boolean => {
    if (rule.tool !== tool.name && rule.tool !== "*") return false;
    if (rule.pattern === undefined) return true;
    const command = argumentOf(args, "command");
    if (command !== undefined) {
      if (kind === "allow") return !SHELL_CHAINING.test(command) && commandMatches(rule.pattern, command);
      return splitShellCommands(command).some((part) => commandMatches(rule.pattern!, part));
    }
    const filePath = argumentOf(args, "path") ?? argumentOf(args, "file_path");
    if (filePath !== undefined) {
      return globToRegExp(rule.pattern, { matchBaseName: false }).test(relativePath(filePath));
    }
    return false;
  };

  const check = ({ tool, args }: { toolCall: ToolCall; tool: Tool; args: unknown }): PermissionDecision => {
    const denied = rules.deny.find((rule) => matches(rule, tool, args, "deny"));
    if (denied) {
      return { behavior: "deny", reason: `Permission denied by rule "${denied.source}"` };
    }
    if (mode === "plan" && !tool.readOnly) {
      return {
        behavior: "deny",
        reason: `You are in plan mode: ${tool.name} changes things and is not allowed now. Use read-only tools to investigate, then present your plan; the user leaves plan mode to carry it out.`,
      };
    }
    if (mode === "bypass") return { behavior: "allow" };
    if (rules.ask.some((rule) => matches(rule, tool, args, "ask"))) return askOrDeny(tool);
    if (rules.allow.some((rule) => matches(rule, tool, args, "allow"))) return { behavior: "allow" };
    if (tool.readOnly) return { behavior: "allow" };
    if (mode === "acceptEdits" && editTools.has(tool.name)) return { behavior: "allow" };
    return askOrDeny(tool);
  };

  const askOrDeny = (tool: Tool): PermissionDecision =>
    mode === "deny"
      ? {
          behavior: "deny",
          reason: `Permission denied: ${tool.name} needs approval and approvals are off (permission mode "deny")`,
        }
      : { behavior: "ask" };

  return {
    check,
    get mode() {
      return mode;
    },
    setMode(next) {
      mode = next;
    },
    addRule(kind, rule) {
      rules[kind].push(parseRule(rule));
    },
    allowAlways(toolName) {
      rules.allow.push(parseRule(toolName));
    },
    rules() {
      return {
        allow: rules.allow.map((r) => r.source),
        ask: rules.ask.map((r) => r.source),
        deny: rules.deny.map((r) => r.source),
      };
    },
  };
}
