import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPermissions, defineTool } from "../index.js";
import { analyzeShellCommand } from "../tools/internal/shell-commands.js";
import { tempDir } from "./fixtures/tools-helpers.js";

// A deny rule must mean what it says: `bash(rm:*)` refuses every command line that would run rm,
// however it is nested, and refuses what it cannot see through. Each attack below is first run in a
// real bash to prove it deletes the file (so the list holds real bypasses, not guesses), then
// checked against the rule.

const bash = defineTool({
  name: "bash",
  description: "bash",
  parameters: z.object({ command: z.string() }),
  execute: () => "",
});

const decide = (command: string, rules = { allow: ["bash"], deny: ["bash(rm:*)"] }, mode = "bypass") =>
  createPermissions({ mode: mode as never, rules }).check({
    toolCall: { type: "toolCall", id: "c", name: "bash", arguments: { command } },
    tool: bash,
    args: { command },
  });

/** Command lines that each delete ./x when bash runs them. */
const ATTACKS = [
  "rm -f x",
  "echo $(rm -f x)",
  "echo `rm -f x`",
  "x=$(rm -f x)",
  "y=`rm -f x` true",
  'echo "$(rm -f x)"',
  'echo "`rm -f x`"',
  "echo ${y:-$(rm -f x)}",
  "(rm -f x)",
  "{ rm -f x; }",
  "true && rm -f x",
  "false || rm -f x",
  "true; rm -f x",
  "true\nrm -f x",
  "echo | rm -f x",
  "true & rm -f x; wait",
  "cat <(rm -f x)",
  "echo $(echo $(rm -f x))",
  "echo $(( $(rm -f x) + 1 ))",
  "if true; then rm -f x; fi",
  "while rm -f x; do break; done",
  "for i in 1; do rm -f x; done",
  "case a in a) rm -f x;; esac",
  "case a in (b) true;; a) rm -f x;; esac",
  "f() { rm -f x; }; f",
  "function f { rm -f x; }; f",
  "! rm -f x",
  "time rm -f x",
  "FOO=1 rm -f x",
  "\\rm -f x",
  "'rm' -f x",
  '"r"m -f x',
  "$'\\x72m' -f x",
  "$'\\162m' -f x",
  "r\\\nm -f x",
  "/bin/rm -f x",
  "/usr/bin/env rm -f x",
  "env -i rm -f x",
  "command rm -f x",
  "exec rm -f x",
  "nohup rm -f x 2>/dev/null",
  "nice -n 5 rm -f x",
  "timeout 5 rm -f x",
  "echo x | xargs rm -f",
  "find . -name x -exec rm -f {} +",
  "eval 'rm -f x'",
  'eval "r""m -f x"',
  "bash -c 'rm -f x'",
  'sh -c "echo; rm -f x"',
  "bash -o pipefail -c 'rm -f x'",
  "bash -lc 'rm -f x'",
  "echo rm -f x | bash",
  "echo rm -f x | sh -s",
  "bash <<< 'rm -f x'",
  "bash <<EOF\nrm -f x\nEOF",
  "cat <<EOF\n$(rm -f x)\nEOF",
  "c=rm; $c -f x",
  "$(echo rm) -f x",
  "`echo rm` -f x",
  "${RM:-rm} -f x",
  "/bin/r[m] -f x",
  "{rm,-f,x}",
  "c='rm -f x'; eval $c",
  "c='rm -f x'; bash -c \"$c\"",
  "trap 'rm -f x' EXIT",
  "source <(echo rm -f x)",
  ". /dev/stdin <<< 'rm -f x'",
  "bash <(echo rm -f x)",
  "echo rm -f x | xargs env",
  "echo rm -f x | xargs -I{} bash -c '{}'",
  "echo x | xargs -I{} sh -c 'rm -f {}'",
  "coproc rm -f x; wait",
  "rm${IFS}-f${IFS}x",
  'set -- rm -f x; "$@"',
];

/** Everyday commands that must still run under the same deny rule. */
const HARMLESS = [
  "git status",
  "npm test 2>&1 | tail -20",
  "ls -la && echo done",
  "for f in *.ts; do echo $f; done",
  "cat <<'EOF' > notes.txt\nrm -rf / is a bad idea, don't\nEOF",
  "case $1 in a) echo a;; *) echo other;; esac",
  "[ -f x ] && echo present",
  "[[ -n $HOME ]] && echo home",
  'echo "$HOME" $((1 + 2))',
  "i=$((i + 1)); (( $i > 3 )) && echo big",
  "find . -name '*.ts' -exec grep -l TODO {} +",
  "git commit -m 'rm the old helper'",
  "echo rm",
  "grep -rn 'rm -rf' src || true",
  "command -v rm",
  "bash scripts/build.sh",
  "python3 -c 'print(1)'",
  "echo $(date) > out.txt",
  "VAR=1 npm run build",
  "find . -name '*.log' -exec sh -c 'echo \"$1\"' _ {} \\;",
  "ls | xargs -n1 echo",
  "trap 'echo bye' EXIT; make",
  "source .venv/bin/activate && pytest",
];

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("am-shell-"));
});
afterAll(() => cleanup());

function deletesX(command: string): boolean {
  const file = path.join(root, "x");
  writeFileSync(file, "x");
  try {
    execFileSync("bash", ["-c", command], {
      cwd: root,
      stdio: "ignore",
      timeout: 5000,
      env: { PATH: process.env.PATH },
    });
  } catch {
    // a failing command can still have run rm
  }
  return !existsSync(file);
}

describe("bash deny rules see nested commands", () => {
  it.each(ATTACKS)("refuses %j (which really deletes the file)", (command) => {
    expect(deletesX(command)).toBe(true);
    expect(decide(command)).toMatchObject({ behavior: "deny" });
  });

  it.each(HARMLESS)("still allows %j", (command) => {
    expect(decide(command)).toEqual({ behavior: "allow" });
  });

  it("says which rule matched, or why the command cannot be checked against it", () => {
    expect(decide("echo $(rm -f x)")).toEqual({
      behavior: "deny",
      reason: 'Permission denied by rule "bash(rm:*)"',
    });
    expect(decide("c=rm; $c -f x")).toEqual({
      behavior: "deny",
      reason:
        'Permission denied: the rule "bash(rm:*)" cannot be checked against this command because the command name "$c" is only known when it runs. Write the command so that every command it runs is spelled out.',
    });
    expect(decide("echo rm -f x | bash")).toMatchObject({
      reason: expect.stringMatching(/because bash reads its commands from standard input/),
    });
    expect(decide("echo 'unclosed")).toMatchObject({
      reason: expect.stringMatching(/because a single quote is never closed/),
    });
  });

  it("refuses what it cannot check only when a command rule applies", () => {
    // No command rule: nothing to check, the mode decides.
    expect(decide("c=rm; $c -f x", { allow: ["bash"], deny: [] })).toEqual({ behavior: "allow" });
    // A deny rule for another tool does not apply to bash.
    expect(decide("c=rm; $c -f x", { allow: ["bash"], deny: ["write_file(secret/**)"] })).toEqual({
      behavior: "allow",
    });
  });

  it("ask rules see nested commands too, and ask about what they cannot check", () => {
    const rules = { allow: ["bash"], ask: ["bash(git push:*)"], deny: [] };
    expect(decide("echo $(git push --force)", rules, "default")).toEqual({ behavior: "ask" });
    expect(decide("$GIT push", rules, "default")).toEqual({ behavior: "ask" });
    expect(decide("git status", rules, "default")).toEqual({ behavior: "allow" });
  });

  it("an allow prefix still never allows a nested command", () => {
    const rules = { allow: ["bash(echo:*)"], deny: [] };
    expect(decide("echo $(rm -f x)", rules, "default")).toEqual({ behavior: "ask" });
    expect(decide("echo hello", rules, "default")).toEqual({ behavior: "allow" });
  });
});

describe("command rules spelled with a star", () => {
  it('reads "rm *" as the prefix "rm:*", so the deny rule denies', () => {
    const rules = { allow: ["bash"], deny: ["bash(rm *)"] };
    for (const command of ["rm -rf x", "rm x", "sudo rm -f x", "git status; rm -f x"]) {
      expect(decide(command, rules)).toEqual({
        behavior: "deny",
        reason: 'Permission denied by rule "bash(rm *)"',
      });
    }
    expect(decide("rmdir x", rules)).toEqual({ behavior: "allow" });
    expect(decide("git status", { allow: ["bash(git status *)"], deny: [] }, "default")).toEqual({
      behavior: "allow",
    });
  });

  it("refuses a star anywhere else instead of denying nothing", () => {
    expect(() => decide("rm -rf x", { allow: ["bash"], deny: ["bash(rm*)"] })).toThrow(
      'Invalid permission rule "bash(rm*)": in a command pattern "*" works only at the end, as a prefix ("rm:*")',
    );
    expect(() => decide("git push origin main", { allow: ["bash"], deny: ["bash(git * main)"] })).toThrow(
      /"\*" works only at the end, as a prefix \("git:\*"\)/,
    );
    expect(() => createPermissions().addRule("deny", "bash(rm -rf *:*)")).toThrow(/works only at the end/);
  });
});

describe("analyzeShellCommand", () => {
  it("lists each command once per form, nested ones included", () => {
    expect(analyzeShellCommand("echo $(rm -f x) && /bin/ls 'a b'")).toEqual({
      commands: ["rm -f x", "echo $(...)", "/bin/ls a b", "ls a b"],
    });
    expect(analyzeShellCommand("sudo -u root rm -rf /tmp/x").commands).toContain("rm -rf /tmp/x");
  });
});

describe("analyzeShellCommand on any input", () => {
  it("always answers (commands, or why it cannot tell) and never throws or hangs", () => {
    const shellish = fc.string({
      unit: fc.constantFrom(..."ab rm;&|()<>$`'\"\\{}[]*?#=\n\t-c!~%0123456789".split("")),
      maxLength: 60,
    });
    fc.assert(
      fc.property(shellish, (source) => {
        const result = analyzeShellCommand(source);
        expect(Array.isArray(result.commands)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
