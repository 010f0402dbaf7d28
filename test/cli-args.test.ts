import { describe, expect, it } from "vitest";
import { OPTION_NAMES, parseArgs, PROVIDER_CHOICES, USAGE, UsageError } from "../cli/args.js";
import { PROVIDER_NAMES } from "../providers/from-env.js";

describe("agent-machine command line", () => {
  it("joins the words of the prompt and takes options before or after it", () => {
    const args = parseArgs(["fix", "the", "--print", "tests", "--model", "gpt-4.1"]);
    expect(args).toMatchObject({ prompt: "fix the tests", print: true, model: "gpt-4.1" });
  });

  it("parses every strategy, --opt=value, and numbers", () => {
    expect(parseArgs(["--strategy", "parallel"]).strategy).toBe("parallel");
    expect(parseArgs(["--strategy=sequential"]).strategy).toBe("sequential");
    expect(parseArgs(["--strategy", "auto"]).strategy).toBe("auto");
    expect(parseArgs(["--strategy", "batched:3"]).strategy).toEqual({ batched: 3 });
    expect(parseArgs(["--max-turns", "5"]).maxTurns).toBe(5);
    expect(parseArgs(["--permission-mode", "acceptEdits"]).permissionMode).toBe("acceptEdits");
    expect(parseArgs(["--visualize", "4000"])).toMatchObject({ visualize: true, port: 4000 });
    expect(parseArgs(["--visualize", "explain this"])).toMatchObject({
      visualize: true,
      prompt: "explain this",
    });
  });

  it("--resume takes an id when one follows, else means 'choose'", () => {
    expect(parseArgs(["--resume", "20261122-050909-84d243"]).resume).toBe("20261122-050909-84d243");
    expect(parseArgs(["--resume"]).resume).toBe(true);
    expect(parseArgs(["--resume", "--print"])).toMatchObject({ resume: true, print: true });
    expect(parseArgs(["--resume", "what next?"])).toMatchObject({ resume: true, prompt: "what next?" });
    expect(parseArgs(["--resume", "summarise"])).toMatchObject({ resume: true, prompt: "summarise" });
    // A mistyped id is still an id, so the command says there is no such session.
    expect(parseArgs(["--resume", "does-not-exist"]).resume).toBe("does-not-exist");
    expect(parseArgs(["--resume", "../../etc"])).toMatchObject({ resume: true, prompt: "../../etc" });
    expect(parseArgs(["-c", "go on"])).toMatchObject({ continue: true, prompt: "go on" });
  });

  it("everything after -- is the prompt", () => {
    expect(parseArgs(["--", "--print", "is", "text"])).toMatchObject({
      prompt: "--print is text",
      print: false,
    });
  });

  it("rejects bad input with a message that says what to use", () => {
    expect(() => parseArgs(["--strategy", "batched:0"])).toThrow(UsageError);
    expect(() => parseArgs(["--strategy", "fast"])).toThrow(/use parallel, sequential, auto or batched:N/);
    expect(() => parseArgs(["--permission-mode", "yolo"])).toThrow(
      /use default, acceptEdits, plan, bypass, deny/,
    );
    expect(() => parseArgs(["--max-turns", "0"])).toThrow("--max-turns needs a positive integer");
    expect(() => parseArgs(["--model"])).toThrow("--model needs a value");
    expect(() => parseArgs(["--model", "--print"])).toThrow("--model needs a value");
    // A negative number is a wrong value, not a missing one.
    expect(() => parseArgs(["--max-turns", "-3"])).toThrow('--max-turns needs a positive integer, got "-3"');
    expect(() => parseArgs(["--visualize", "99999"])).toThrow(
      '--visualize needs a port number from 1 to 65535, got "99999"',
    );
    expect(() => parseArgs(["--visualize=0"])).toThrow("--visualize needs a port number from 1 to 65535");
    for (const id of ["..", "."]) {
      expect(() => parseArgs([`--resume=${id}`])).toThrow(`Invalid session id "${id}"`);
      expect(() => parseArgs(["--recover", id])).toThrow(`Invalid session id "${id}"`);
    }
    expect(() => parseArgs(["--continue", "--resume"])).toThrow(
      "Use one of --continue, --resume and --recover",
    );
    expect(() => parseArgs(["--recover", "20260101-000000-abc", "-c"])).toThrow(
      "Use one of --continue, --resume and --recover",
    );
    expect(() => parseArgs(["--nope"])).toThrow("Unknown option --nope");
  });

  it("refuses a value given to an option that takes none (--json=false is not JSON on), and an empty one", () => {
    for (const flag of ["--print", "--json", "--continue", "--demo", "--no-sandbox", "--help", "--version"]) {
      expect(() => parseArgs([`${flag}=false`, "hi"])).toThrow(new UsageError(`${flag} takes no value`));
    }
    expect(() => parseArgs(["--model=", "hi"])).toThrow(new UsageError("--model needs a value"));
    expect(() => parseArgs(["--cwd=", "hi"])).toThrow(new UsageError("--cwd needs a value"));
    expect(() => parseArgs(["--model", "", "hi"])).toThrow(new UsageError("--model needs a value"));
    // An option that takes a value still takes it after "=".
    expect(parseArgs(["--model=gpt-5", "--visualize=8080"])).toMatchObject({ model: "gpt-5", port: 8080 });
  });

  it("answers a mistyped option with the one it most likely meant", () => {
    expect(() => parseArgs(["--modle", "gpt-4.1"])).toThrow("Unknown option --modle (did you mean --model?)");
    expect(() => parseArgs(["--prnt", "hi"])).toThrow("Unknown option --prnt (did you mean --print?)");
    expect(() => parseArgs(["--resum"])).toThrow("Unknown option --resum (did you mean --resume?)");
    expect(() => parseArgs(["--max-turn=3"])).toThrow(
      "Unknown option --max-turn (did you mean --max-turns?)",
    );
    // Nothing close: no guess.
    expect(() => parseArgs(["--frobnicate"])).toThrow(/^Unknown option --frobnicate$/);
  });

  it("refuses an unknown --provider as a usage error, with the name it most likely meant", () => {
    expect(() => parseArgs(["--provider", "anthropc", "hi"])).toThrow(
      new UsageError(
        'Invalid --provider "anthropc" (did you mean anthropic?): use anthropic, openai, openai-responses, openai-compatible, gemini, bedrock',
      ),
    );
    expect(() => parseArgs(["--provider=nope"])).toThrow(/^Invalid --provider "nope": use anthropic, /);
    expect(PROVIDER_CHOICES).toEqual(PROVIDER_NAMES);
    for (const provider of PROVIDER_NAMES)
      expect(parseArgs(["--provider", provider]).provider).toBe(provider);
  });

  it("--help says what the command does with an old sessions folder, and what each exit status means", () => {
    // Such a folder is named and left alone (a repository can ship one), never moved or adopted.
    expect(USAGE).not.toMatch(/moved there/);
    expect(USAGE).toContain("never adopted");
    for (const status of [
      "0 done",
      "2 usage error",
      "4 a call needed an approval",
      "130 aborted",
      "141 stdout closed",
    ])
      expect(USAGE).toContain(status);
  });

  it("suggests only options the command takes, and knows every one --help lists", () => {
    const listed = [...USAGE.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]);
    expect(new Set(listed)).toEqual(new Set(OPTION_NAMES));
    for (const name of OPTION_NAMES) {
      expect(() => parseArgs([name, "x"]), name).not.toThrow(/Unknown option/);
    }
  });
});
