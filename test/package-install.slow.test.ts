import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import * as esbuild from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "./browser.js";
import { SANDBOX_ARGS } from "./fixtures/cli-harness.js";
import { appLockFile, mustRun, packCheckout, ROOT, run } from "./package-install-pack.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { chatStream } from "./fixtures/provider-wire.js";

// The package as an app gets it: `npm pack` of a copy of this repository (so `prepare` builds it,
// as it does before a publish, without touching this checkout's dist/), then the tarball installed
// into a temporary app outside the source tree, offline, and used from there. docs/package.md.

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  exports: Record<string, string | Record<string, unknown>>;
  peerDependencies: Record<string, string>;
};

/** The app uses every entry, so it installs the optional peers too (the Restate SDK), as such an app must. */
const appDependencies = (tarball: string) => ({ "agent-machine": tarball, ...pkg.peerDependencies });

let work: string;
let source: string;
let app: string;
let packedFiles: string[];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "agent-machine-package-"));
  const packed = await packCheckout(work);
  source = packed.source;
  packedFiles = packed.files;

  app = join(work, "app");
  mkdirSync(app);
  const tarball = `file:../${packed.filename}`;
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({
      name: "app",
      private: true,
      type: "module",
      dependencies: appDependencies(tarball),
    }),
  );
  writeFileSync(
    join(app, "package-lock.json"),
    JSON.stringify(appLockFile(tarball, appDependencies(tarball))),
  );
  await mustRun("npm", ["ci", "--offline", "--no-audit", "--no-fund"], app);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
}, 300_000);

describe("npm pack", () => {
  it("ships the compiled library with its types and maps, the command, the page, the docs and the licence", () => {
    for (const file of [
      "dist/index.js",
      "dist/index.d.ts",
      "dist/index.js.map",
      "dist/browser.js",
      "dist/cli/main.js",
      "bin/agent-machine.js",
      "visualizer/page/index.html",
      "visualizer/page/app.js",
      "README.md",
      "LICENSE",
      "docs/package.md",
      "package.json",
    ]) {
      expect(packedFiles).toContain(file);
    }
  });

  it("ships no tests, fixtures, benchmarks, sources, lint configs or CI scripts", () => {
    const unwanted = packedFiles.filter(
      (file) =>
        /^(test|bench|\.ci|core|agent|machines|actors|providers|tools|context|cli)\//.test(file) ||
        /^[^/]+\.ts$/.test(file) ||
        /^(eslint\.config\.js|tsconfig.*\.json|vitest\.config\.ts|\.prettier.*|\.gitignore)$/.test(file) ||
        (file.endsWith(".ts") && !file.endsWith(".d.ts")),
    );
    expect(unwanted).toEqual([]);
  });
});

describe("the shipped docs and declarations", () => {
  // What a user has is the tarball: its docs and TSDoc must not send them to files it lacks.
  const installed = () => join(app, "node_modules", "agent-machine");
  const notes = /\b(DESIGN|DURABLE|CHANGELOG|FRONTENDS|PERFORMANCE)\.md\b/;
  // A path into the repository's tests, benchmarks or CI (a folder name alone is fine).
  const repositoryPath = /(^|[^\w/.-])(test|bench|\.ci)\/[\w*]/;

  it("link only to files in the tarball, and name no repository-only file outside a repository-only section", () => {
    const problems: string[] = [];
    for (const file of packedFiles.filter((name) => name.endsWith(".md"))) {
      let repositoryOnly = false;
      readFileSync(join(installed(), file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          const where = `${file}:${i + 1}`;
          // <!-- repository-only --> marks the rest of its section as about a clone of the repository.
          if (/^#{1,6} /.test(line)) repositoryOnly = false;
          if (line.trim() === "<!-- repository-only -->") repositoryOnly = true;
          for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
            if (/^([a-z]+:|#)/.test(target!)) continue;
            const resolved = posix.normalize(posix.join(posix.dirname(file), target!.replace(/#.*$/, "")));
            if (!packedFiles.includes(resolved))
              problems.push(`${where}: links to ${target}, not in the package`);
          }
          if (notes.test(line)) problems.push(`${where}: names ${notes.exec(line)![0]}`);
          if (!repositoryOnly && repositoryPath.test(line)) problems.push(`${where}: ${line.trim()}`);
        });
    }
    expect(problems).toEqual([]);
  });

  it("have TSDoc that names no file the package lacks", () => {
    const problems: string[] = [];
    for (const file of packedFiles.filter((name) => name.endsWith(".d.ts"))) {
      readFileSync(join(installed(), file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (!/^\s*(\/\*\*|\*|\/\/)/.test(line)) return; // comments only: string types may hold any text
          if (notes.test(line) || repositoryPath.test(line))
            problems.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(problems).toEqual([]);
  });
});

describe("the installed package, in Node", () => {
  let report: {
    entries: Record<string, string[]>;
    events: string[];
    messages: { role: string; text: string }[];
    page: { status: number; title: string | undefined; script: number };
    shared: { workspaceError: boolean; prices: number | undefined };
  };

  beforeAll(async () => {
    // An app module: every entry, a scripted agent with a tool, the visualizer page.
    writeFileSync(
      join(app, "check.mjs"),
      `
import { readFileSync } from "node:fs";
import * as z from "zod";
const pkg = JSON.parse(readFileSync(new URL("./node_modules/agent-machine/package.json", import.meta.url), "utf8"));
const entries = {};
for (const subpath of Object.keys(pkg.exports)) {
  if (subpath === "./package.json" || subpath === "./testing/vitest") continue;
  const specifier = subpath === "." ? "agent-machine" : "agent-machine/" + subpath.slice(2);
  // A stylesheet (agent-machine/chart.css) is for a bundler or a <link>, not import(): its text.
  if (subpath.endsWith(".css")) {
    entries[specifier] = readFileSync(new URL(import.meta.resolve(specifier)), "utf8").includes(".chart") ? ["css"] : [];
    continue;
  }
  entries[specifier] = Object.keys(await import(specifier)).sort();
}
const { createAgent, defineTool, scripted, visualize, withCost, WorkspaceError } = await import("agent-machine");
const add = defineTool({
  name: "add",
  description: "Adds two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => String(a + b),
});
const agent = createAgent({
  provider: scripted([{ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "2 + 3 = 5" }]),
  tools: [add],
});
const events = [];
agent.events$.subscribe((event) => events.push(event.type));
await agent.prompt("Add 2 and 3");
const text = (content) => typeof content === "string" ? content : content.map((part) => part.text ?? part.name ?? "").join("");
const messages = agent.messages.map((message) => ({ role: message.role, text: text(message.content) }));

const server = await visualize(agent, { port: 0 });
const response = await fetch(server.url);
const html = await response.text();
const script = (await fetch(new URL("app.js", server.url))).status;
await server.close();

const browser = await import("agent-machine/browser");
browser.setModelPrice("package-test-model", { input: 1, output: 0 });
const usage = { input: 1_000_000, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 1_000_000 };
const codingTools = await import("agent-machine/coding-tools");
console.log(JSON.stringify({
  entries,
  events,
  messages,
  page: { status: response.status, title: /<title>([^<]*)<\\/title>/.exec(html)?.[1], script },
  shared: {
    workspaceError: codingTools.WorkspaceError === WorkspaceError,
    prices: withCost(usage, "package-test-model").cost?.total,
  },
}));
`,
    );
    const result = await mustRun(process.execPath, ["check.mjs"], app);
    report = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
  });

  it("imports every entry of the exports map", () => {
    // agent-machine/testing/vitest imports vitest (the app's own dev dependency) and runs only inside a vitest run.
    const subpaths = Object.keys(pkg.exports).filter(
      (subpath) => subpath !== "./package.json" && subpath !== "./testing/vitest",
    );
    expect(Object.keys(report.entries)).toHaveLength(subpaths.length);
    for (const [entry, names] of Object.entries(report.entries))
      expect(names.length, entry).toBeGreaterThan(0);
    expect(report.entries["agent-machine"]).toEqual(
      expect.arrayContaining(["createAgent", "codingTools", "visualize"]),
    );
    expect(report.entries["agent-machine/browser"]).toContain("createAgent");
    expect(report.entries["agent-machine/browser"]).not.toContain("codingTools");
    expect(report.entries["agent-machine/cli"]).toContain("runCli");
    expect(report.entries["agent-machine/chart"]).toContain("createChart");
    expect(report.entries["agent-machine/chart.css"]).toEqual(["css"]);
    // The entries share their modules: one class, one price table.
    expect(report.shared).toEqual({ workspaceError: true, prices: 1 });
  });

  it("runs a scripted agent with a tool", () => {
    expect(report.messages).toEqual([
      { role: "user", text: "Add 2 and 3" },
      { role: "assistant", text: "add" },
      { role: "toolResult", text: "5" },
      { role: "assistant", text: "2 + 3 = 5" },
    ]);
    expect(report.events.filter((type) => type.startsWith("tool_execution_"))).toEqual([
      "tool_execution_start",
      "tool_execution_end",
    ]);
    expect(report.events.at(-1)).toBe("agent_end");
  });

  it("serves the visualizer page", () => {
    expect(report.page).toEqual({ status: 200, title: "agent-machine visualizer", script: 200 });
  });

  it("loads a bundled entry: a handful of the package's files on import, not one per source module", () => {
    // A cold start pays for every file Node reads and compiles (issue 44): the build writes each
    // entry as one file, its shared code in a few chunks. (tsc's one file per module: 180 and 136.)
    const installed = join(app, "node_modules", "agent-machine");
    expect(staticGraph(join(installed, "dist", "index.js")).length).toBeLessThan(50);
    expect(staticGraph(join(installed, "dist", "browser.js")).length).toBeLessThan(40);
  });

  it("ships its JavaScript as ASCII, so V8 holds each file as a one-byte string", () => {
    // One character past ASCII anywhere (a `…` in a comment did it) and Node decodes, and V8
    // keeps and scans, the whole file as UTF-16: the 450 KB core chunk, on every cold start.
    const installed = join(app, "node_modules", "agent-machine", "dist");
    const files = readdirSync(installed, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".js"),
    );
    expect(files.length).toBeGreaterThan(10);
    const wide = files.filter((file) => readFileSync(join(installed, file)).some((byte) => byte > 0x7f));
    expect(wide).toEqual([]);
  });

  it("builds nothing on import that a first prompt does not use: no Web Crypto, no node:fs, no tool's schema", async () => {
    // A cold start pays for what the import does (issue 44). Node's Web Crypto (loaded by the first
    // read of globalThis.crypto, or by node:crypto imported as a module) is some 25 internal
    // modules, node:fs as a module ~20 more (its streams); the tools load them when they run. A
    // tool's zod schema is built when the tool is made, not as the package loads. zod
    // keeps every .describe() text in one registry per process (globalThis.__zod_globalRegistry),
    // which counts the schemas built; the defineTool call at the end shows the count works.
    const firstPrompt = (entry: string) => `
import * as z from "zod";
const registry = globalThis.__zod_globalRegistry;
let described = 0;
const add = registry.add;
registry.add = function (...args) { described++; return add.apply(this, args); };
const { createAgent, defineTool, scripted } = await import(${JSON.stringify(entry)});
const agent = createAgent({ provider: scripted([{ text: "Hello." }]) });
await agent.prompt("Hi");
const atPrompt = described;
defineTool({ name: "t", description: "d", parameters: z.object({ a: z.string().describe("a") }), execute: () => "" });
const loaded = (name) => process.moduleLoadList.some((m) => m.endsWith(" " + name));
console.log(JSON.stringify({ answered: agent.messages.at(-1)?.role === "assistant", webCrypto: loaded("internal/crypto/webcrypto"), fileStreams: loaded("internal/fs/streams"), described: atPrompt, counted: described > atPrompt }));
agent.stop();`;
    for (const entry of ["agent-machine", "agent-machine/browser"]) {
      const result = await mustRun(process.execPath, ["--input-type=module", "-e", firstPrompt(entry)], app);
      expect(JSON.parse(result.stdout.trim().split("\n").at(-1)!), entry).toEqual({
        answered: true,
        webCrypto: false,
        fileStreams: false,
        described: 0,
        counted: true,
      });
    }
  });

  it("loads the few rxjs files a first prompt uses, not rxjs's index, and hands out rxjs's own Observable", async () => {
    // Under Node, `import "rxjs"` is CommonJS that requires all ~220 of rxjs's files, 40-70 ms of a
    // cold start (issue 44). The package takes Observable and Subject from their own files; the
    // index re-exports those files, so an app's `rxjs` operators still work on the agent's streams.
    const firstPrompt = (entry: string) => `
import { createRequire } from "node:module";
const { createAgent, scripted } = await import(${JSON.stringify(entry)});
const agent = createAgent({ provider: scripted([{ text: "Hello." }, { text: "Again." }]) });
await agent.prompt("Hi");
const files = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes("/node_modules/rxjs/"));
const index = files.some((f) => f.endsWith("/rxjs/dist/cjs/index.js"));
const { Observable, map, firstValueFrom } = await import("rxjs");
const next = firstValueFrom(agent.events$.pipe(map((e) => e.type)));
const answer = agent.prompt("Again");
console.log(JSON.stringify({ index, few: files.length > 0 && files.length < 40, same: agent.events$ instanceof Observable, piped: typeof (await next) }));
await answer;
agent.stop();`;
    for (const entry of ["agent-machine", "agent-machine/browser"]) {
      const result = await mustRun(process.execPath, ["--input-type=module", "-e", firstPrompt(entry)], app);
      expect(JSON.parse(result.stdout.trim().split("\n").at(-1)!), entry).toEqual({
        index: false,
        few: true,
        same: true,
        piped: "string",
      });
    }
  });
});

/** The package's own files that `file` imports statically, itself included (what an import loads). */
function staticGraph(file: string): string[] {
  const seen = new Set<string>();
  const pending = [file];
  while (pending.length) {
    const next = pending.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    const text = readFileSync(next, "utf8");
    for (const [, from, bare] of text.matchAll(
      /^(?:import|export)[^;]*?from\s*"([^"]+)"|^import\s*"([^"]+)"/gm,
    )) {
      const specifier = (from ?? bare)!;
      if (specifier.startsWith(".")) pending.push(join(dirname(next), specifier));
    }
  }
  return [...seen];
}

describe("the installed package, in TypeScript", () => {
  it("has types for every entry, under Node's module resolution", async () => {
    const specifiers = Object.keys(pkg.exports)
      .filter(
        (subpath) =>
          subpath !== "./package.json" && subpath !== "./testing/vitest" && !subpath.endsWith(".css"),
      )
      .map((subpath) => (subpath === "." ? "agent-machine" : `agent-machine/${subpath.slice(2)}`));
    writeFileSync(
      join(app, "types.ts"),
      [
        ...specifiers.map((specifier, i) => `import * as entry${i} from "${specifier}";`),
        'import { type Agent, createAgent, scripted } from "agent-machine";',
        'import type { ToolResult } from "agent-machine/browser";',
        'export const agent: Agent = createAgent({ provider: scripted([{ text: "hi" }]) });',
        'export const result: ToolResult = { content: [{ type: "text", text: "hi" }] };',
        `export const entries = [${specifiers.map((_, i) => `entry${i}`).join(", ")}];`,
      ].join("\n"),
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ["types.ts"],
      }),
    );
    // A missing declaration file is an error under strict (TS7016), as is a name the types lack.
    const tsc = await run(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", app],
      app,
    );
    expect(tsc.stdout).toBe("");
    expect(tsc.code).toBe(0);
  });
});

describe("the installed command", () => {
  const command = () => join(app, "node_modules", ".bin", "agent-machine");

  it("runs compiled: the app has neither tsx nor TypeScript", () => {
    expect(existsSync(join(app, "node_modules", "tsx"))).toBe(false);
    expect(existsSync(join(app, "node_modules", "typescript"))).toBe(false);
  });

  it("answers --version and --help", async () => {
    const version = await run(command(), ["--version"], app);
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    const help = await run(command(), ["--help"], app);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: agent-machine");
  });

  it("runs a prompt with the coding tools on a scripted model", async () => {
    const workspace = join(app, "workspace");
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "notes.txt"), "remember the milk\n");
    writeFileSync(
      join(app, "script.json"),
      JSON.stringify([
        { toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
        { text: "The notes say to remember the milk." },
      ]),
    );
    const result = await run(
      command(),
      [...SANDBOX_ARGS, "-p", "What do my notes say?", "--cwd", workspace],
      app,
      {
        AGENT_MACHINE_SCRIPT: join(app, "script.json"),
      },
    );
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, stdout: "The notes say to remember the milk.\n" });
  });
});

describe("the bin in a clone", () => {
  // The copy that was packed is a clone with a build. Marks tell which code answered --help.
  const usage = (file: string, mark: string) => {
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/Usage( \([a-z]+\))?: agent-machine/, `Usage (${mark}): agent-machine`));
  };
  const help = async () =>
    (await mustRun(process.execPath, [join(source, "bin", "agent-machine.js"), "--help"], source)).stdout;

  /** The built file that holds the usage text (the entries are bundled: a chunk under dist/). */
  const builtUsage = () => {
    const dist = join(source, "dist");
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) =>
      file.endsWith(".js"),
    );
    const holding = files.filter((file) =>
      readFileSync(join(dist, file), "utf8").includes("Usage: agent-machine"),
    );
    expect(holding).toHaveLength(1);
    return join(dist, holding[0]!);
  };

  it("runs the build when it is newer than every source, the sources through tsx once one is edited or dist/ is gone", async () => {
    usage(builtUsage(), "compiled");
    expect(await help()).toContain("Usage (compiled): agent-machine");
    usage(join(source, "cli", "args.ts"), "source");
    expect(await help()).toContain("Usage (source): agent-machine");
    rmSync(join(source, "dist"), { recursive: true });
    expect(await help()).toContain("Usage (source): agent-machine");
  });
});

describe("the installed package, bundled for a browser", () => {
  let browser: Browser | undefined;
  let provider: ProviderFixtureServer | undefined;

  afterAll(async () => {
    await browser?.close();
    await provider?.close();
    await esbuild.stop();
  });

  /** Bundles `contents` as a module of the app, the way a web app's bundler would. */
  function bundle(contents: string) {
    return esbuild.build({
      stdin: { contents, resolveDir: app, loader: "js" },
      absWorkingDir: app,
      bundle: true,
      platform: "browser",
      format: "esm",
      minify: true,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
  }

  it("bundles every entry that declares a browser condition, with no node: module", async () => {
    const browserSafe = Object.entries(pkg.exports).filter(
      ([, target]) => typeof target === "object" && "browser" in target,
    );
    expect(browserSafe.map(([subpath]) => subpath)).toEqual(expect.arrayContaining([".", "./browser"]));
    for (const [subpath] of browserSafe) {
      const specifier = subpath === "." ? "agent-machine" : `agent-machine/${subpath.slice(2)}`;
      // esbuild refuses a node: built-in on platform=browser.
      await expect(bundle(`export * from "${specifier}";`), specifier).resolves.toBeDefined();
    }
  });

  it('gives `import ... from "agent-machine"` the browser entry, and runs agents in Chromium', async () => {
    const built = await bundle(`
      import * as z from "zod";
      import { createAgent, defineTool, openaiCompatible, scripted } from "agent-machine";
      const text = ({ content }) =>
        typeof content === "string" ? content : content.map((part) => part.text ?? part.name ?? "").join("");
      const clock = defineTool({
        name: "clock",
        description: "The time in a city",
        parameters: z.object({ city: z.string() }),
        readOnly: true,
        execute: ({ city }) => "12:00 in " + city,
      });
      async function run(provider) {
        const agent = createAgent({ provider, tools: [clock] });
        const events = [];
        agent.events$.subscribe((event) => events.push(event.type));
        await agent.prompt("What time is it in Lisbon?");
        return { messages: agent.messages.map((m) => m.role + ": " + text(m)), last: events.at(-1) };
      }
      window.results = Promise.all([
        run(scripted([{ toolCalls: [{ name: "clock", arguments: { city: "Lisbon" } }] }, { text: "It is noon." }])),
        run(openaiCompatible({ baseURL: location.origin + "/v1", model: "gpt-4.1", dangerouslyAllowBrowser: true })),
      ]);
    `);
    const inputs = Object.keys(built.metafile.inputs);
    expect(inputs).toContain("node_modules/agent-machine/dist/browser.js");
    expect(inputs).not.toContain("node_modules/agent-machine/dist/index.js");

    provider = await startProviderServer();
    provider.reply(
      {
        type: "sse",
        frames: chatStream({
          toolCalls: [{ index: 0, id: "call_1", name: "clock", json: ['{"city":', '"Lisbon"}'] }],
        }),
      },
      { type: "sse", frames: chatStream({ text: ["It is ", "noon in Lisbon."] }) },
    );
    browser = await launchBrowser();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // The page and its script come from a made-up origin; its /v1 goes to the fixture server, so the
    // provider's fetch is same-origin, as behind an app's own proxy.
    await page.route("http://app.test/**", async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === "/") {
        return route.fulfill({
          contentType: "text/html",
          body: '<!doctype html><title>app</title><script type="module" src="/app.js"></script>',
        });
      }
      if (url.pathname === "/app.js") {
        return route.fulfill({ contentType: "text/javascript", body: built.outputFiles[0]!.text });
      }
      const response = await route.fetch({ url: `${provider!.url}${url.pathname}` });
      return route.fulfill({ response });
    });
    await page.goto("http://app.test/");
    const results = await page.evaluate(() => (window as unknown as { results: Promise<unknown> }).results);
    expect(errors).toEqual([]);
    expect(results).toEqual([
      {
        messages: [
          "user: What time is it in Lisbon?",
          "assistant: clock",
          "toolResult: 12:00 in Lisbon",
          "assistant: It is noon.",
        ],
        last: "agent_end",
      },
      {
        messages: [
          "user: What time is it in Lisbon?",
          "assistant: clock",
          "toolResult: 12:00 in Lisbon",
          "assistant: It is noon in Lisbon.",
        ],
        last: "agent_end",
      },
    ]);
    // The browser sent the tool's JSON Schema, as Node would.
    expect(provider.requests[0]!.body.tools[0].function).toMatchObject({
      name: "clock",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    });
  });
});
