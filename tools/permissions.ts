import * as path from "node:path";
import { checkOptionKeys, closestKey, type OptionKeys } from "../core/option-keys.js";
import type { PermissionChecker, PermissionDecision } from "../core/options.js";
import type { Tool, ToolCall } from "./define-tool.js";
import { globToRegExp } from "./internal/glob-pattern.js";
import { analyzeShellCommand, type ShellCommands } from "./internal/shell-commands.js";

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
  /**
   * Tools the rules may name although the agent does not have them when it is created (a tool of
   * another agent sharing these permissions, an MCP server's tools you connect later). Every other
   * rule must name a tool of the agent (or `*`): `createAgent` refuses a rule naming none, with the
   * closest name, so a typo is an error and never a rule that silently matches nothing.
   */
  laterTools?: string[];
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
  /**
   * Throws when a rule (or an `editTools` name) names none of these tools nor a `laterTools` one.
   * `createAgent` calls it with the agent's tools, its sub-agents' included; afterwards `addRule`
   * and `allowAlways` check against them too.
   */
  checkToolNames(names: readonly string[]): void;
}

interface ParsedRule {
  source: string;
  tool: string;
  /** Absent: the rule covers every call of the tool. */
  pattern?: string;
}

function parseRules(kind: keyof PermissionRules, list: unknown): ParsedRule[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    throw new TypeError(`createPermissions: rules.${kind} must be an array of rule strings`);
  }
  return list.map(parseRule);
}

function parseRule(rule: string): ParsedRule {
  if (typeof rule !== "string")
    throw new TypeError(`Invalid permission rule ${JSON.stringify(rule)}: not a string`);
  const match = /^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$/s.exec(rule);
  if (!match) throw new Error(`Invalid permission rule "${rule}": use "tool" or "tool(pattern)"`);
  const pattern = match[2]?.trim();
  if (match[1] === "bash" && pattern !== undefined) checkCommandPattern(rule, pattern);
  return { source: rule, tool: match[1]!, pattern: pattern === "" || pattern === "*" ? undefined : pattern };
}

/**
 * A command pattern takes `*` only as a prefix's end (`rm:*`, or `rm *` as other agents spell it).
 * Anywhere else it would be compared as a literal `*`, and `deny: ["bash(rm*)"]` would deny nothing.
 */
function checkCommandPattern(rule: string, pattern: string): void {
  const body = commandPrefixOf(pattern) ?? pattern;
  if (pattern === "*" || !body.includes("*")) return;
  const prefix = body.slice(0, body.indexOf("*")).replace(/:\s*$/, "").trim();
  throw new Error(
    `Invalid permission rule "${rule}": in a command pattern "*" works only at the end, as a prefix${prefix ? ` ("${prefix}:*")` : ""}; anywhere else it would match only a literal "*"`,
  );
}

/** The prefix of a prefix pattern (`git status:*` or `git status *`), else `undefined`. */
function commandPrefixOf(pattern: string): string | undefined {
  const trimmed = pattern.trim();
  if (trimmed.endsWith(":*")) return trimmed.slice(0, -2).trim();
  if (/\s\*$/.test(trimmed)) return trimmed.slice(0, -1).trim();
  return undefined;
}

function checkNameList(option: string, list: unknown): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((name) => typeof name !== "string")) {
    throw new TypeError(`createPermissions: ${option} must be an array of tool names`);
  }
  return list as string[];
}

function unknownToolMessage(kind: keyof PermissionRules, rule: ParsedRule, known: string[]): string {
  const suggestion = closestKey(rule.tool, known);
  return (
    `the ${kind} rule "${rule.source}" names the tool "${rule.tool}", which this agent does not have` +
    `${suggestion ? ` (did you mean "${suggestion}"?)` : ""}. Its tools: ${known.join(", ") || "none"}. ` +
    `Tool names are case-sensitive; for a tool the agent gets later, list it in createPermissions({ laterTools })`
  );
}

const PERMISSION_MODES: readonly PermissionMode[] = ["default", "acceptEdits", "plan", "bypass", "deny"];

const PERMISSIONS_OPTION_KEYS: OptionKeys<PermissionsOptions> = {
  mode: true,
  rules: true,
  cwd: true,
  editTools: true,
  laterTools: true,
};
const PERMISSION_RULES_KEYS: OptionKeys<PermissionRules> = { allow: true, ask: true, deny: true };

function checkMode(mode: unknown, where: string): PermissionMode {
  if (!PERMISSION_MODES.includes(mode as PermissionMode)) {
    throw new TypeError(
      `${where}: unknown permission mode ${JSON.stringify(mode)}; use one of ${PERMISSION_MODES.join(", ")}`,
    );
  }
  return mode as PermissionMode;
}

/** Shell operators that chain or nest commands: a prefix rule must not allow what follows them. */
const SHELL_CHAINING = /;|&&|\|\||\||`|\$\(|\n|&|>|</;

function commandMatches(pattern: string, command: string): boolean {
  const normalized = command.trim().replace(/\s+/g, " ");
  const prefix = commandPrefixOf(pattern)?.replace(/\s+/g, " ");
  if (prefix !== undefined) return normalized === prefix || normalized.startsWith(`${prefix} `);
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
  checkOptionKeys("createPermissions", options, PERMISSIONS_OPTION_KEYS);
  checkOptionKeys("createPermissions rules", options.rules, PERMISSION_RULES_KEYS);
  let mode: PermissionMode = checkMode(options.mode ?? "default", "createPermissions");
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const editTools = new Set(options.editTools ?? ["write_file", "edit_file"]);
  const laterTools = checkNameList("laterTools", options.laterTools);
  const rules: Record<keyof PermissionRules, ParsedRule[]> = {
    allow: parseRules("allow", options.rules?.allow),
    ask: parseRules("ask", options.rules?.ask),
    deny: parseRules("deny", options.rules?.deny),
  };
  /** The tools of the agents these permissions were given to; empty until `createAgent` says. */
  const knownTools = new Set<string>(laterTools);
  let toolsKnown = false;

  const checkRuleTool = (kind: keyof PermissionRules, rule: ParsedRule) => {
    if (!toolsKnown || rule.tool === "*" || knownTools.has(rule.tool)) return;
    throw new TypeError(unknownToolMessage(kind, rule, [...knownTools]));
  };

  const relativePath = (input: string): string => {
    const absolute = path.resolve(cwd, input);
    const relative = path.relative(cwd, absolute).split(path.sep).join("/");
    return relative === "" ? "." : relative;
  };

  /** One call's view for the rules: its command's parts are found once, when a rule needs them. */
  const callView = (tool: Tool, args: unknown) => {
    const command = argumentOf(args, "command");
    let shell: ShellCommands | undefined;
    return {
      tool,
      command,
      filePath: argumentOf(args, "path") ?? argumentOf(args, "file_path"),
      shell: () => (shell ??= analyzeShellCommand(command ?? "")),
    };
  };
  type CallView = ReturnType<typeof callView>;

  const appliesTo = (rule: ParsedRule, call: CallView) => rule.tool === call.tool.name || rule.tool === "*";

  /** Allow rules match a simple command only; deny and ask rules any command the line runs. */
  const matches = (rule: ParsedRule, call: CallView, kind: keyof PermissionRules): boolean => {
    if (!appliesTo(rule, call)) return false;
    if (rule.pattern === undefined) return true;
    if (call.command !== undefined) {
      if (kind === "allow") {
        return !SHELL_CHAINING.test(call.command) && commandMatches(rule.pattern, call.command);
      }
      return call.shell().commands.some((part) => commandMatches(rule.pattern!, part));
    }
    if (call.filePath !== undefined) {
      return globToRegExp(rule.pattern, { matchBaseName: false }).test(relativePath(call.filePath));
    }
    return false;
  };

  /**
   * A command rule that cannot see every command of the line (a name from a variable, `eval "$x"`,
   * a shell reading stdin): the first such rule, with why, so the caller can refuse (deny) or ask.
   */
  const uncheckable = (kind: "deny" | "ask", call: CallView) => {
    if (call.command === undefined) return undefined;
    const rule = rules[kind].find((r) => r.pattern !== undefined && appliesTo(r, call));
    if (!rule) return undefined;
    const why = call.shell().unknown;
    return why === undefined ? undefined : { rule, why };
  };

  const check = ({ tool, args }: { toolCall: ToolCall; tool: Tool; args: unknown }): PermissionDecision => {
    const call = callView(tool, args);
    const denied = rules.deny.find((rule) => matches(rule, call, "deny"));
    if (denied) {
      return { behavior: "deny", reason: `Permission denied by rule "${denied.source}"` };
    }
    const unclear = uncheckable("deny", call);
    if (unclear) {
      return {
        behavior: "deny",
        reason: `Permission denied: the rule "${unclear.rule.source}" cannot be checked against this command because ${unclear.why}. Write the command so that every command it runs is spelled out.`,
      };
    }
    if (mode === "plan" && !tool.readOnly) {
      return {
        behavior: "deny",
        reason: `You are in plan mode: ${tool.name} changes things and is not allowed now. Use read-only tools to investigate, then present your plan; the user leaves plan mode to carry it out.`,
      };
    }
    if (mode === "bypass") return { behavior: "allow" };
    if (rules.ask.some((rule) => matches(rule, call, "ask")) || uncheckable("ask", call)) {
      return askOrDeny(tool);
    }
    if (rules.allow.some((rule) => matches(rule, call, "allow"))) return { behavior: "allow" };
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
      mode = checkMode(next, "setMode");
    },
    addRule(kind, rule) {
      if (!Object.hasOwn(rules, kind)) {
        throw new TypeError(`addRule: unknown rule kind ${JSON.stringify(kind)}; use allow, ask or deny`);
      }
      const parsed = parseRule(rule);
      checkRuleTool(kind, parsed);
      rules[kind].push(parsed);
    },
    allowAlways(toolName) {
      const parsed = parseRule(toolName);
      checkRuleTool("allow", parsed);
      rules.allow.push(parsed);
    },
    checkToolNames(names) {
      // Permissions shared by several agents know the tools of them all.
      for (const name of names) knownTools.add(name);
      toolsKnown = true;
      for (const kind of ["deny", "ask", "allow"] as const) {
        for (const rule of rules[kind]) checkRuleTool(kind, rule);
      }
      // The default edit tools may be absent (an agent without file tools); ones named must exist.
      for (const name of options.editTools ?? []) {
        if (knownTools.has(name)) continue;
        const suggestion = closestKey(name, [...knownTools]);
        throw new TypeError(
          `editTools names the tool "${name}", which this agent does not have` +
            `${suggestion ? ` (did you mean "${suggestion}"?)` : ""}. Its tools: ${[...knownTools].join(", ") || "none"}`,
        );
      }
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
