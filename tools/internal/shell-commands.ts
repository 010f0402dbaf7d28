// The bash subset that permission rules can trust. `bash` deny rules (tools/permissions.ts) ask
// which commands a command line would run; this file answers by reading the line the way bash
// does, without running or expanding anything.
//
// What it understands: bash's quoting (single, double, `$'...'`, backslashes), words and
// comments; the operators that chain commands (`;` `&&` `||` `|` `&` newlines) and redirections
// (here-documents and here-strings too); subshells and `{ }` groups; compound commands (`if`,
// `while`, `until`, `for`, `case`, `select`, functions, `(( ))` arithmetic); command and process
// substitutions (`$( )`, backticks, `<( )`, `>( )`, also inside double quotes, `${ }` and
// here-documents); and the commands that run another command from their arguments: wrappers
// (`env`, `sudo`, `timeout`, `nohup`, ...), shells given `-c`, `eval`, `trap`, `source`,
// `xargs`, `parallel`, `find -exec`. Each found command is recorded as its words after quote
// removal, by its base name too when run through a path.
//
// What it refuses (the `unknown` of its answer), and why: anything whose command is only decided
// when the line runs — a command name from a variable, a substitution or a glob/brace pattern,
// `eval` or `bash -c` of an expanded string, a shell or `source` reading commands from standard
// input or a file, arguments built by `xargs` — and lines it cannot read to the end (unclosed
// quotes or substitutions, nesting deeper than MAX_DEPTH). A deny rule that guessed there could be
// bypassed by the very spelling it failed to read, so the answer is "cannot tell", and the rule
// refuses; a user who needs such a line writes it plainly. Aliases are not expanded (a
// non-interactive bash does not either); a function's body is read where it is defined. What a
// program does inside (`python -c`, `make`, a script) is beyond any command rule: the OS sandbox
// is the wall for that.
//
// One concern, one file: the grammar and the table of command-running commands call each other
// (a wrapper's argument is parsed again as a command line), so they stay together.

/**
 * Finds every command a bash command line would run, for permission rules: the commands of a
 * chain (`;`, `&&`, `||`, `|`, `&`, newlines), of subshells and groups, of command substitutions
 * (`$( )`, backticks, also inside double quotes, `${ }` and here-documents), of process
 * substitutions (`<( )`, `>( )`), of compound commands (`if`, `while`, `for`, `case`, functions),
 * and of the strings `eval`, `bash -c` and wrappers (`env`, `sudo`, `xargs`, `timeout`,
 * `find -exec`, ...) hand to another command.
 *
 * Where the command that runs is only known when it runs (a name from a variable or a
 * substitution, a glob or brace expansion in a name, `eval "$x"`, a shell reading its commands from
 * standard input, unbalanced quotes), the result says so in `unknown`: a deny rule must then refuse,
 * since it cannot tell whether it is being bypassed.
 *
 * This sees what the shell itself runs; what another program does (`python -c`, `make`, a script
 * file) is beyond any command rule (the OS sandbox is the wall for that).
 */
export interface ShellCommands {
  /**
   * The commands found, each as its words after quote removal and whitespace normalisation
   * (`"rm"  -f 'a b'` → `rm -f a b`); a command run through a path is listed by its base name too
   * (`/bin/rm x` → also `rm x`), and a wrapped one on its own (`sudo rm x` → also `rm x`).
   */
  commands: string[];
  /** Why some command cannot be known before it runs; absent when every command is known. */
  unknown?: string;
}

interface Word {
  text: string;
  /** Contains an expansion whose value is only known at run time ($x, $( ), backticks, ${ }). */
  expanded: boolean;
  /** Contains an unquoted glob or brace character, so it may expand to other words. */
  pattern: boolean;
}

interface HereDoc {
  delimiter: string;
  expands: boolean;
  stripTabs: boolean;
}

const MAX_DEPTH = 16;

/** Words that open or close compound commands: what follows them is the command. */
const RESERVED_PREFIXES = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "while",
  "until",
  "do",
  "done",
  "esac",
  "time",
  "coproc",
]);

/** Commands that run the command given in their arguments. */
const WRAPPERS = new Set([
  "builtin",
  "busybox",
  "chronic",
  "chroot",
  "command",
  "doas",
  "env",
  "exec",
  "flock",
  "ionice",
  "nice",
  "nohup",
  "parallel",
  "setsid",
  "stdbuf",
  "strace",
  "sudo",
  "taskset",
  "time",
  "timeout",
  "unbuffer",
  "watch",
  "xargs",
]);

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish"]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/** Commands that run the commands of a string or a file they are given. */
const EVALUATORS = new Set(["eval", "trap", "source", "."]);
/** Commands that build the arguments of the command they run from their input (or file names). */
const ARGUMENT_BUILDERS = new Set(["xargs", "parallel", "find"]);
/** Files that are really a stream: sourcing one runs commands no rule can see. */
const STREAM_FILES = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/self\/fd\/\d+)$/;

class Unknown extends Error {}

/**
 * Lists the commands a bash command line runs, nested ones included (see {@link ShellCommands}).
 *
 * @example
 * ```ts
 * analyzeShellCommand("echo $(rm -f x)").commands; // ["echo $(rm -f x)", "rm -f x"]
 * analyzeShellCommand("$cmd -rf /").unknown; // 'the command name "$cmd" is only known when it runs'
 * ```
 */
export function analyzeShellCommand(source: string): ShellCommands {
  const commands: string[] = [];
  try {
    new ShellParser(source, commands, 0).parseAll();
    return { commands };
  } catch (error) {
    if (error instanceof Unknown) return { commands, unknown: error.message };
    throw error;
  }
}

class ShellParser {
  private i = 0;
  private pendingHereDocs: HereDoc[] = [];
  /** Open `case` statements: whether the next word starts a pattern. */
  private caseStack: { inPattern: boolean; seenIn: boolean }[] = [];

  constructor(
    private readonly src: string,
    private readonly out: string[],
    private readonly depth: number,
  ) {
    if (depth > MAX_DEPTH) throw new Unknown("the command nests too deeply to be checked");
  }

  parseAll(): void {
    this.parseList(undefined);
    if (this.pendingHereDocs.length > 0) this.readHereDocs();
  }

  /** Parses commands until `close` (")" or end of input); consumes the closing character. */
  private parseList(close: ")" | undefined): void {
    let words: Word[] = [];
    const finish = () => {
      this.finishCommand(words);
      words = [];
    };
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      const next = this.src[this.i + 1];
      if (c === "\\" && next === "\n") {
        this.i += 2;
        continue;
      }
      if (c === " " || c === "\t" || c === "\r") {
        this.i++;
        continue;
      }
      if (c === "\n") {
        this.i++;
        finish();
        if (this.pendingHereDocs.length > 0) this.readHereDocs();
        continue;
      }
      if (c === "#") {
        while (this.i < this.src.length && this.src[this.i] !== "\n") this.i++;
        continue;
      }
      if (c === ";") {
        finish();
        if (next === ";" || next === "&") {
          // `;;`, `;&`, `;;&` end a case branch: a pattern follows.
          this.i += this.src[this.i + 2] === "&" ? 3 : 2;
          const open = this.caseStack.at(-1);
          if (open) open.inPattern = true;
        } else this.i++;
        continue;
      }
      if (c === "&" || c === "|") {
        if (c === "&" && next === ">") {
          this.i += this.src[this.i + 2] === ">" ? 3 : 2;
          this.readRedirectTarget();
          continue;
        }
        finish();
        this.i += next === c || (c === "|" && next === "&") ? 2 : 1;
        continue;
      }
      if (c === "(") {
        this.i++;
        if (words.length > 0 && this.peekNonBlank() === ")") {
          // `name()`: a function definition; its body is the next (compound) command.
          this.skipBlanks();
          this.i++;
          words = [];
          continue;
        }
        finish();
        // `(( ... ))` is arithmetic, unless its parentheses say it is two nested subshells.
        if (this.src[this.i] === "(" && this.readArithmetic(this.i + 1)) continue;
        this.parseList(")");
        continue;
      }
      if (c === ")") {
        this.i++;
        const open = this.caseStack.at(-1);
        if (open?.inPattern) {
          // The end of a case pattern: commands follow.
          open.inPattern = false;
          words = [];
          continue;
        }
        finish();
        if (close === ")") return;
        continue; // a stray ")": bash would refuse the line; nothing can hide behind it
      }
      if (c === "<" || c === ">") {
        if (next === "(") {
          this.i += 2;
          this.parseNested(")"); // a process substitution is a word of the command
          words.push({ text: "<(...)", expanded: true, pattern: false });
          continue;
        }
        // A file-descriptor number glued to the operator (`2>&1`) is not a word of the command.
        const last = words.at(-1);
        if (last && /^\d+$/.test(last.text) && this.isGlued()) words.pop();
        this.readRedirection();
        continue;
      }
      const word = this.readWord();
      if (word === undefined) continue;
      const open = this.caseStack.at(-1);
      if (open && words.length === 0 && word.text === "esac" && !word.expanded) {
        this.caseStack.pop();
        continue;
      }
      if (open?.inPattern) continue; // pattern words are not commands
      words.push(word);
      if (words.length === 1 && word.text === "case" && !word.expanded) {
        this.caseStack.push({ inPattern: false, seenIn: false });
      } else if (open && !open.seenIn && words[0]?.text === "case" && word.text === "in") {
        open.seenIn = true;
        open.inPattern = true;
        words = [];
      }
    }
    finish();
    if (close === ")") throw new Unknown('a "(" or "$(" is never closed');
  }

  /** Whether the character before the current one is not a blank (so a number before `>` is an fd). */
  private isGlued(): boolean {
    const before = this.src[this.i - 1];
    return before !== undefined && !/\s/.test(before);
  }

  private peekNonBlank(): string | undefined {
    let j = this.i;
    while (j < this.src.length && (this.src[j] === " " || this.src[j] === "\t")) j++;
    return this.src[j];
  }

  private skipBlanks(): void {
    while (this.i < this.src.length && (this.src[this.i] === " " || this.src[this.i] === "\t")) this.i++;
  }

  private readRedirection(): void {
    const rest = this.src.slice(this.i);
    const op = /^(<<<|<<-|<<|<>|<&|>>|>&|>\||<|>)/.exec(rest)![0];
    this.i += op.length;
    if (op === "<<" || op === "<<-") {
      this.skipBlanks();
      const start = this.i;
      const word = this.readWord();
      if (!word) throw new Unknown("a here-document has no delimiter");
      const raw = this.src.slice(start, this.i);
      this.pendingHereDocs.push({
        delimiter: word.text,
        expands: !/['"\\]/.test(raw),
        stripTabs: op === "<<-",
      });
      return;
    }
    this.readRedirectTarget();
  }

  private readRedirectTarget(): void {
    this.skipBlanks();
    if (this.src[this.i] === "(") return; // `>(...)` after `>`: handled as the next token
    this.readWord();
  }

  /** Reads the bodies of the here-documents started on the line just ended. */
  private readHereDocs(): void {
    for (const doc of this.pendingHereDocs) {
      for (;;) {
        if (this.i >= this.src.length) return; // bash warns and ends the document at EOF
        let end = this.src.indexOf("\n", this.i);
        if (end === -1) end = this.src.length;
        const line = this.src.slice(this.i, end);
        this.i = Math.min(end + 1, this.src.length);
        const compared = doc.stripTabs ? line.replace(/^\t+/, "") : line;
        if (compared === doc.delimiter) break;
        if (doc.expands) this.scanExpansions(line);
      }
    }
    this.pendingHereDocs = [];
  }

  /** Finds the command substitutions in text that is expanded like a double-quoted string. */
  private scanExpansions(text: string): void {
    const parser = new ShellParser(text, this.out, this.depth + 1);
    parser.readDoubleQuotedBody(undefined);
  }

  /** Parses `$( ... )` (or a process substitution) with the same input, recording its commands. */
  private parseNested(close: ")"): void {
    if (this.depth + 1 > MAX_DEPTH) throw new Unknown("the command nests too deeply to be checked");
    const saved = this.caseStack;
    this.caseStack = [];
    this.parseList(close);
    this.caseStack = saved;
  }

  /** Reads one word (quotes removed, expansions recursed into); `undefined` at an operator. */
  private readWord(): Word | undefined {
    const word: Word = { text: "", expanded: false, pattern: false };
    const start = this.i;
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (" \t\r\n;&|()<>".includes(c)) break;
      if (c === "\\") {
        const next = this.src[this.i + 1];
        if (next === "\n") this.i += 2;
        else {
          word.text += next ?? "";
          this.i += 2;
        }
        continue;
      }
      if (c === "'") {
        const end = this.src.indexOf("'", this.i + 1);
        if (end === -1) throw new Unknown("a single quote is never closed");
        word.text += this.src.slice(this.i + 1, end);
        this.i = end + 1;
        continue;
      }
      if (c === '"') {
        this.i++;
        this.readDoubleQuotedBody(word);
        continue;
      }
      if (c === "`") {
        this.readBackticks(word);
        continue;
      }
      if (c === "$") {
        this.readDollar(word, false);
        continue;
      }
      if ("*?[{".includes(c) && this.looksLikePattern(c)) word.pattern = true;
      word.text += c;
      this.i++;
    }
    return this.i === start ? undefined : word;
  }

  private looksLikePattern(c: string): boolean {
    if (c !== "{") return true;
    const close = this.src.indexOf("}", this.i);
    if (close === -1) return false;
    const inner = this.src.slice(this.i + 1, close);
    return inner.includes(",") || inner.includes("..");
  }

  /**
   * Reads a double-quoted string up to its closing quote (or, for here-document text, the end),
   * recursing into substitutions.
   */
  readDoubleQuotedBody(word: Word | undefined): void {
    const target = word ?? { text: "", expanded: false, pattern: false };
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (c === '"' && word !== undefined) {
        this.i++;
        return;
      }
      if (c === "\\") {
        const next = this.src[this.i + 1];
        if (next !== undefined && '$`"\\\n'.includes(next)) {
          if (next !== "\n") target.text += next;
        } else target.text += c + (next ?? "");
        this.i += 2;
        continue;
      }
      if (c === "`") {
        this.readBackticks(target);
        continue;
      }
      if (c === "$") {
        this.readDollar(target, true);
        continue;
      }
      target.text += c;
      this.i++;
    }
    if (word !== undefined) throw new Unknown("a double quote is never closed");
  }

  private readBackticks(word: Word): void {
    let j = this.i + 1;
    let body = "";
    while (j < this.src.length && this.src[j] !== "`") {
      if (this.src[j] === "\\" && j + 1 < this.src.length && "$`\\".includes(this.src[j + 1]!)) {
        body += this.src[j + 1];
        j += 2;
      } else {
        body += this.src[j];
        j++;
      }
    }
    if (j >= this.src.length) throw new Unknown("a backtick substitution is never closed");
    new ShellParser(body, this.out, this.depth + 1).parseAll();
    this.i = j + 1;
    word.text += "`...`";
    word.expanded = true;
  }

  private readDollar(word: Word, quoted: boolean): void {
    const next = this.src[this.i + 1];
    if (next === "(") {
      if (this.src[this.i + 2] === "(" && this.readArithmetic(this.i + 3)) {
        word.text += "$((...))";
        word.expanded = true;
        return;
      }
      this.i += 2;
      this.parseNested(")");
      word.text += "$(...)";
      word.expanded = true;
      return;
    }
    if (next === "{") {
      this.i += 2;
      this.readBraceExpansion();
      word.text += "${...}";
      word.expanded = true;
      return;
    }
    if (next === "'" && !quoted) {
      this.i += 2;
      word.text += this.readAnsiCString();
      return;
    }
    if (next === '"' && !quoted) {
      this.i += 2;
      this.readDoubleQuotedBody(word);
      return;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*|^[0-9@*#?$!-]/.exec(this.src.slice(this.i + 1));
    if (name) {
      word.text += `$${name[0]}`;
      word.expanded = true;
      this.i += 1 + name[0].length;
      return;
    }
    word.text += "$";
    this.i++;
  }

  /**
   * Reads an arithmetic expression starting at `start` (just after its opening `((`) up to its
   * `))`, recursing into the substitutions inside. Returns false, consuming nothing, when the first
   * unmatched `)` is not followed by another: then bash reads nested subshells instead.
   */
  private readArithmetic(start: number): boolean {
    const saved = this.i;
    let depth = 0;
    const scratch: Word = { text: "", expanded: false, pattern: false };
    this.i = start;
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (c === "(") depth++;
      else if (c === ")") {
        if (depth > 0) depth--;
        else if (this.src[this.i + 1] === ")") {
          this.i += 2;
          return true;
        } else break;
      } else if (c === "$") {
        this.readDollar(scratch, true);
        continue;
      } else if (c === "`") {
        this.readBackticks(scratch);
        continue;
      } else if (c === "'" || c === '"') {
        const end = this.src.indexOf(c, this.i + 1);
        if (end === -1) break;
        this.i = end;
      }
      this.i++;
    }
    this.i = saved;
    return false;
  }

  /** `${ ... }`: skips to the matching brace, recursing into substitutions inside. */
  private readBraceExpansion(): void {
    let depth = 1;
    const scratch: Word = { text: "", expanded: false, pattern: false };
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (c === "}") {
        depth--;
        this.i++;
        if (depth === 0) return;
        continue;
      }
      if (c === "\\") {
        this.i += 2;
        continue;
      }
      if (c === "'") {
        const end = this.src.indexOf("'", this.i + 1);
        if (end === -1) throw new Unknown("a single quote is never closed");
        this.i = end + 1;
        continue;
      }
      if (c === '"') {
        this.i++;
        this.readDoubleQuotedBody(scratch);
        continue;
      }
      if (c === "`") {
        this.readBackticks(scratch);
        continue;
      }
      if (c === "$") {
        if (this.src[this.i + 1] === "{") {
          depth++;
          this.i += 2;
          continue;
        }
        this.readDollar(scratch, true);
        continue;
      }
      this.i++;
    }
    throw new Unknown('a "${" is never closed');
  }

  /** `$'...'`: ANSI-C quoting, whose escapes can spell any name (`$'\x72m'` is `rm`). */
  private readAnsiCString(): string {
    let text = "";
    while (this.i < this.src.length) {
      const c = this.src[this.i]!;
      if (c === "'") {
        this.i++;
        return text;
      }
      if (c !== "\\") {
        text += c;
        this.i++;
        continue;
      }
      const rest = this.src.slice(this.i + 1);
      const simple: Record<string, string> = {
        a: "\x07",
        b: "\b",
        e: "\x1b",
        E: "\x1b",
        f: "\f",
        n: "\n",
        r: "\r",
        t: "\t",
        v: "\v",
        "\\": "\\",
        "'": "'",
        '"': '"',
        "?": "?",
      };
      const hex = /^x([0-9a-fA-F]{1,2})/.exec(rest);
      const octal = /^([0-7]{1,3})/.exec(rest);
      const unicode = /^u([0-9a-fA-F]{1,4})|^U([0-9a-fA-F]{1,8})/.exec(rest);
      if (hex) {
        text += String.fromCharCode(parseInt(hex[1]!, 16));
        this.i += 1 + hex[0].length;
      } else if (octal) {
        text += String.fromCharCode(parseInt(octal[1]!, 8));
        this.i += 1 + octal[0].length;
      } else if (unicode) {
        text += String.fromCodePoint(parseInt((unicode[1] ?? unicode[2])!, 16));
        this.i += 1 + unicode[0].length;
      } else if (rest[0] !== undefined && rest[0] in simple) {
        text += simple[rest[0]];
        this.i += 2;
      } else if (rest[0] === "c") {
        throw new Unknown("a $'\\c' control escape cannot be checked");
      } else {
        text += `\\${rest[0] ?? ""}`;
        this.i += 2;
      }
    }
    throw new Unknown("a $' quote is never closed");
  }

  /** Records a finished simple command (and what it runs in turn). */
  private finishCommand(words: Word[]): void {
    recordCommand(words, this.out, this.depth);
  }
}

function recordCommand(all: readonly Word[], out: string[], depth: number): void {
  let words = all.slice();
  // Reserved words and leading assignments are not the command.
  for (;;) {
    const first = words[0];
    if (!first) break;
    // An assignment's value may be expanded (`x=$(...)`, recorded as it was read); its name may not.
    if (/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(first.text)) words = words.slice(1);
    else if (first.expanded) break;
    else if (RESERVED_PREFIXES.has(first.text)) words = words.slice(1);
    else if (first.text === "function") words = words.slice(2);
    else break;
  }
  const first = words[0];
  if (!first) return;
  // `for x in ...`, `select x in ...`, `[[ ... ]]`: no command of their own (substitutions inside
  // were recorded as they were read).
  if (!first.expanded && ["for", "select", "[["].includes(first.text)) return;
  if (first.expanded) throw new Unknown(`the command name "${first.text}" is only known when it runs`);
  if (first.pattern && first.text !== "[")
    throw new Unknown(`the command name "${first.text}" is a pattern the shell expands`);
  const texts = words.map((word) => word.text);
  out.push(texts.join(" ").replace(/\s+/g, " ").trim());
  const name = first.text.includes("/") ? first.text.slice(first.text.lastIndexOf("/") + 1) : first.text;
  if (name !== first.text) out.push([name, ...texts.slice(1)].join(" ").replace(/\s+/g, " ").trim());

  if (name === "eval") {
    if (words.slice(1).some((word) => word.expanded || word.pattern)) {
      throw new Unknown("eval runs a string that is only known when it runs");
    }
    parseInner(texts.slice(1).join(" "), out, depth);
    return;
  }
  if (name === "trap") {
    // `trap 'commands' SIGNAL...`: the first argument that is not an option runs later.
    const action = words.slice(1).find((word) => word.expanded || !word.text.startsWith("-"));
    if (action?.expanded) throw new Unknown("trap runs a string that is only known when it runs");
    if (action) parseInner(action.text, out, depth);
    return;
  }
  if (name === "source" || name === ".") {
    const file = words[1];
    if (file && (file.expanded || STREAM_FILES.test(file.text))) {
      throw new Unknown(`${name} runs commands from ${file.text}, which no rule can see`);
    }
    return;
  }
  if (SHELLS.has(name)) {
    recordShell(words, out, depth);
    return;
  }
  if (name === "find") {
    words.forEach((word, index) => {
      if (FIND_EXEC.has(word.text) && index + 1 < words.length) {
        builtCommand(name, words.slice(index + 1), out, depth);
      }
    });
    return;
  }
  if (name === "command" && words.some((word) => word.text === "-v" || word.text === "-V")) return;
  if (WRAPPERS.has(name)) {
    // The wrapped command starts at some later word that is not an option: try each.
    for (let index = 1; index < words.length; index++) {
      const word = words[index]!;
      if (!word.expanded && (word.text.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word.text))) {
        continue;
      }
      if (ARGUMENT_BUILDERS.has(name)) builtCommand(name, words.slice(index), out, depth);
      else runsCommand(words.slice(index), out, depth);
    }
  }
}

/**
 * A command whose arguments `xargs`, `parallel` or `find -exec` fill in at run time (`{}`, or
 * appended from the input): fine for an ordinary command, but when it is itself something that runs
 * its arguments (a wrapper, eval, a shell script mentioning `{}`), those arguments decide what runs.
 */
function builtCommand(builder: string, words: Word[], out: string[], depth: number): void {
  const first = words[0]!;
  const name = first.text.slice(first.text.lastIndexOf("/") + 1);
  if (first.text.includes("{}")) throw new Unknown(`${builder} runs commands named by its input`);
  if (WRAPPERS.has(name) || EVALUATORS.has(name)) {
    throw new Unknown(`${builder} builds the arguments of ${name}, and so the command it runs, at run time`);
  }
  if (SHELLS.has(name)) {
    // The script (the word after -c, else the first non-option word) must not come from the input;
    // `{}` among the script's own arguments is fine.
    const flag = words.findIndex((word, index) => index > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(word.text));
    const script = words.slice(flag === -1 ? 1 : flag + 1).find((word) => !/^[-+][A-Za-z]+$/.test(word.text));
    if (script?.text.includes("{}"))
      throw new Unknown(`${builder} builds the script ${name} runs at run time`);
  }
  runsCommand(words, out, depth);
}

function runsCommand(words: Word[], out: string[], depth: number): void {
  if (depth + 1 > MAX_DEPTH) throw new Unknown("the command nests too deeply to be checked");
  recordCommand(words, out, depth + 1);
}

/** Shell options that take the next word as their argument. */
const SHELL_OPTIONS_WITH_ARGUMENT = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);

/**
 * `bash -c "..."` runs its string; a shell with neither `-c` nor a script (or with `-s`) reads
 * standard input, which no rule can see. A `-c` anywhere counts, even after what could be a script
 * name: reading too much as commands only makes the check stricter.
 */
function recordShell(words: Word[], out: string[], depth: number): void {
  const shell = words[0]!.text;
  const flagIndex = words.findIndex(
    (word, index) => index > 0 && !word.expanded && /^-[A-Za-z]*c[A-Za-z]*$/.test(word.text),
  );
  if (flagIndex !== -1) {
    const script = words
      .slice(flagIndex + 1)
      .find((word) => word.expanded || !/^[-+][A-Za-z]+$/.test(word.text));
    if (!script) throw new Unknown(`${shell} -c has no command`);
    if (script.expanded || script.pattern) {
      throw new Unknown(`${shell} -c runs a string that is only known when it runs`);
    }
    parseInner(script.text, out, depth);
    return;
  }
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    if (word.expanded) throw new Unknown(`${shell} runs a script whose name is only known when it runs`);
    if (/^-[A-Za-z]*s[A-Za-z]*$/.test(word.text) && !word.text.startsWith("--")) break;
    if (SHELL_OPTIONS_WITH_ARGUMENT.has(word.text) || /^[-+][A-Za-z]*[oO]$/.test(word.text)) {
      index++;
      continue;
    }
    if (word.text === "--") return; // a script file follows
    if (!/^[-+]/.test(word.text)) return; // a script file
  }
  throw new Unknown(`${shell} reads its commands from standard input`);
}

function parseInner(source: string, out: string[], depth: number): void {
  new ShellParser(source, out, depth + 1).parseAll();
}
