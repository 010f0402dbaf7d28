import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sandboxSupport } from "../index.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicMessage, chatStream, responsesStream } from "./fixtures/provider-wire.js";
import { childEnv, packCheckout, ROOT, type Run, run } from "./package-install-pack.js";

// Each block installs or runs a fresh app (npm, tsx, vitest): a minute is too little on a busy
// machine, and a timeout says nothing about what the page promises.
vi.setConfig({ testTimeout: 180_000 });

// Every command block and code example of every doc page (README.md, docs/*.md) runs as written in
// a fresh app installed from the packed tarball. Each ```sh / ```ts / ```js block is preceded by a
// marker that says how (a block without one fails the test):
//
//   <!-- doc-test: run -->                    sh: run in the page's app, as a bash script (set -e);
//                                             ts: written to a file and run with `npx tsx <file>`
//   <!-- doc-test: run file=agent.ts -->      ts: the file's name (else <page>-<line>.ts)
//   <!-- doc-test: run given="provider, tools" -->
//                                             ts: a fragment that uses names the page defines
//                                             elsewhere; GIVEN below defines them (a scripted model)
//   <!-- doc-test: run runner=vitest -->     ts: a vitest test file (<page>-<line>.test.ts); the page's
//                                             files run in one `vitest run` once its blocks are written
//   <!-- doc-test: run model=fixture -->      ts: ANTHROPIC_* / OPENAI_* point at a local fixture
//                                             server answering "Done." (the example names a real model)
//   <!-- doc-test: save file=service.ts -->   ts: written only; a later sh block runs it
//   <!-- doc-test: background until="text" --> sh or ts: started and left running (a server) until its
//                                             output shows `text`; stopped when the page is done
//   <!-- doc-test: skip <reason> -->          not run, for the reason given
//
// Each page runs in an app of its own when it has an `npm init` block (the README's and the durable
// quickstart's); the other pages' examples run in the README's app, as its "In code" section sets
// one up. The only changes to what is written: `agent-machine` in an `npm install` line is the
// packed tarball, npm prefers its cache (an .npmrc), and the durable page's fixed ports (8080, 9070,
// 9080) are free ports, so parallel runs on one machine do not collide. Every ts file is also
// typechecked (strict, module nodenext) against the installed package.

/** Names fragments use that their page defines elsewhere, each defined with a scripted model. */
const GIVEN: Record<string, string> = {
  provider: `const provider = __scripted(() => ({ text: "Done." }));`,
  tools: `const tools = [__defineTool({ name: "now", description: "The time", parameters: __z.object({}), execute: () => new Date().toISOString() })];`,
  readTool: `const readTool = __createReadFileTool({ workspace: process.cwd() });`,
  workspace: `const workspace = process.cwd();`,
  cwd: `const cwd = process.cwd();`,
  agent: `const agent = __createAgent({ provider: __scripted(() => ({ text: "Done." })) });`,
  options: `const options: __AgentOptions = { provider: __scripted(() => ({ text: "Done." })) };`,
  saved: `const saved = __createAgent(options).getPersistedSnapshot();`,
  port: `const port = undefined as number | undefined;`,
  path: `const path = ".agent-machine/runs/cli.jsonl";`,
  argsText: `const argsText: Record<string, string> = {};`,
  defineTool: `const defineTool = __defineTool;`,
  z: `const z = __z;`,
  serverTools: `const serverTools = [__defineTool({ name: "now", description: "The time", parameters: __z.object({}), execute: () => new Date().toISOString() })];`,
  send: `const send = async (...args: unknown[]) => \`sent \${args.join(" ")}\`;`,
};
const GIVEN_IMPORTS = [
  `import { type AgentOptions as __AgentOptions, createAgent as __createAgent, createReadFileTool as __createReadFileTool, defineTool as __defineTool, scripted as __scripted } from "agent-machine";`,
  `import { z as __z } from "zod";`,
];

interface Block {
  page: string;
  line: number;
  lang: string;
  code: string;
  kind: "run" | "save" | "background" | "skip" | undefined;
  attrs: Record<string, string>;
  reason?: string;
}

const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).map((name) => `docs/${name}`)].filter((page) =>
  page.endsWith(".md"),
);

/** The fenced blocks of a page in sh / bash / ts / js, with the marker before each. */
function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf("```", i + 1);
    const lang = open[1]!;
    if (["sh", "bash", "ts", "js"].includes(lang)) {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === "") before--;
      const marker = /^<!-- doc-test: (\w+)(.*?)\s*-->$/.exec(lines[before]?.trim() ?? "");
      const kind = marker?.[1] as Block["kind"];
      const rest = marker?.[2]?.trim() ?? "";
      const attrs: Record<string, string> = {};
      if (kind !== "skip")
        for (const [, key, quoted, bare] of rest.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g))
          attrs[key!] = quoted ?? bare!;
      blocks.push({
        page,
        line: i + 1,
        lang: lang === "bash" ? "sh" : lang,
        code: lines.slice(i + 1, end).join("\n") + "\n",
        kind,
        attrs,
        ...(kind === "skip" && { reason: rest.replace(/^[—:-]\s*/, "") }),
      });
    }
    i = end;
  }
  return blocks;
}

const pages = PAGES.map((page) => ({ page, blocks: blocksOf(page) }));

describe("every doc page's command blocks and code examples", () => {
  it("are marked: run, save, background, or skip with a reason", () => {
    const unmarked = pages.flatMap(({ blocks }) =>
      blocks.filter((block) => !block.kind || (block.kind === "skip" && block.reason!.length < 10)),
    );
    expect(unmarked.map((block) => `${block.page}:${block.line}`)).toEqual([]);
    const unknown = pages.flatMap(({ blocks }) =>
      blocks.flatMap((block) =>
        (block.attrs.given ?? "")
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name && !(name in GIVEN))
          .map((name) => `${block.page}:${block.line} given ${name}`),
      ),
    );
    expect(unknown).toEqual([]);
  });
});

let work: string;
let tarball: string;
let fixture: ProviderFixtureServer;
const background: ChildProcess[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "agent-machine-docs-"));
  const packed = await packCheckout(work);
  tarball = join(work, packed.filename);
  fixture = await startProviderServer();
  fixture.fallback = (request) => {
    if (request.path.endsWith("/messages"))
      return { type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["Done."] }] }) };
    if (request.path.endsWith("/responses"))
      return { type: "sse", frames: responsesStream({ text: ["Done."] }) };
    return { type: "sse", frames: chatStream({ text: ["Done."] }) };
  };
}, 300_000);

afterAll(async () => {
  for (const child of background) stopGroup(child);
  await fixture?.close();
  // Two apps with their node_modules: a while on a busy machine.
  if (work) await rm(work, { recursive: true, force: true });
}, 300_000);

function stopGroup(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  // The whole group (bash, npx, tsx and its node, the server binary): tsx's node outlives a SIGTERM
  // while a server holds it open.
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What the test changes in a block before it runs (see the header). */
function rewrite(code: string, ports: Map<string, string>): string {
  let out = code.replace(/^(\s*npm (?:install|i)\b.*)$/gm, (line) =>
    line.replace(/(\s)agent-machine(?=\s|$)/, `$1${tarball}`),
  );
  for (const [from, to] of ports) out = out.replace(new RegExp(`\\b${from}\\b`, "g"), to);
  return out;
}

function bash(script: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return run("bash", ["-e", "-c", script], cwd, env, 240_000);
}

function startBackground(script: string, cwd: string, env: Record<string, string>, until: string) {
  const child = spawn("bash", ["-e", "-c", script], { cwd, env: childEnv(env), detached: true });
  background.push(child);
  let output = "";
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${until}" within 120 s:\n${output}`)), 120_000);
    const onData = (data: Buffer) => {
      output += data.toString();
      // eslint-disable-next-line no-control-regex
      if (output.replace(/\x1b\[[0-9;]*m/g, "").includes(until)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before "${until}":\n${output}`));
    });
  });
}

const bubblewrap = sandboxSupport();
/** The TypeScript files written into each app, typechecked once every page has run. */
const filesByApp = new Map<string, string[]>();

/** Pages with an `npm init` block set up their own app; the others use the README's. */
const ownApp = (blocks: Block[]) =>
  blocks.some((block) => block.kind === "run" && /npm init/.test(block.code));
const order = [...pages].sort((a, b) => Number(ownApp(b.blocks)) - Number(ownApp(a.blocks)));

describe.each(order.filter(({ blocks }) => blocks.some((block) => block.kind !== "skip")))(
  "$page, in a fresh app",
  ({ page, blocks }) => {
    const app = () => join(work, ownApp(blocks) ? page.replace(/\W/g, "-") : "README-md");
    const files = () => filesByApp.get(app()) ?? filesByApp.set(app(), []).get(app())!;
    const ports = new Map<string, string>();
    const env: Record<string, string> = {};

    beforeAll(async () => {
      mkdirSync(app(), { recursive: true });
      writeFileSync(join(app(), ".npmrc"), "prefer-offline=true\naudit=false\nfund=false\n");
      if (page === "docs/durable.md") {
        for (const fixed of ["8080", "9070", "9080"]) ports.set(fixed, String(await freePort()));
        // restate-server's ingress and admin where the rewritten blocks expect them; its other ports random.
        Object.assign(env, {
          RESTATE_USE_RANDOM_PORTS: "true",
          RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ports.get("8080")}`,
          RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${ports.get("9070")}`,
        });
      }
    });

    for (const block of blocks) {
      const where = `${page}:${block.line}`;
      if (block.kind === "skip") {
        it.skip(`${where}: skipped, ${block.reason}`, () => {});
        continue;
      }
      const needsSandbox = block.lang === "ts" && /sandbox: true/.test(block.code);
      const skipSandbox = needsSandbox && !bubblewrap.available && !process.env.CI;
      const name = `${where} (${block.kind} ${block.lang})`;
      const reason = " (skipped: it runs bash in bubblewrap, not installed here; CI installs it)";
      it.skipIf(skipSandbox)(skipSandbox ? name + reason : name, async () => {
        const cwd = app();
        if (block.lang === "sh") {
          const script = rewrite(block.code, ports);
          if (block.kind === "background") {
            await startBackground(script, cwd, env, block.attrs.until!);
            return;
          }
          const result = await bash(script, cwd, env);
          expect(result.code, `${where}\n${result.stderr}\n${result.stdout}`).toBe(0);
          if (/npx tsx/.test(script))
            console.log(`${where}:\n${result.stdout.trim().split("\n").slice(-6).join("\n")}`);
          return;
        }
        const vitest = block.attrs.runner === "vitest";
        const file =
          block.attrs.file ?? `${page.replace(/\W/g, "-")}-${block.line}${vitest ? ".test" : ""}.ts`;
        const given = (block.attrs.given ?? "")
          .split(",")
          .map((name) => name.trim())
          .filter(Boolean);
        const prelude = given.length ? [...GIVEN_IMPORTS, ...given.map((name) => GIVEN[name]!), ""] : [];
        writeFileSync(join(cwd, file), prelude.join("\n") + rewrite(block.code, ports));
        files().push(file);
        if (block.kind === "save") return;
        if (vitest) {
          vitestFiles.push(file);
          return;
        }
        const modelEnv: Record<string, string> =
          block.attrs.model === "fixture"
            ? {
                ANTHROPIC_API_KEY: "sk-ant-docs-test",
                ANTHROPIC_BASE_URL: fixture.url,
                OPENAI_API_KEY: "sk-docs-test",
                OPENAI_BASE_URL: fixture.openaiURL,
              }
            : {};
        if (block.kind === "background") {
          await startBackground(`npx tsx ${file}`, cwd, { ...env, ...modelEnv }, block.attrs.until!);
          return;
        }
        // The app's own tsx, as `npx tsx <file>` runs it (without npx's lookup, a second per file).
        const result = await run(
          join(cwd, "node_modules", ".bin", "tsx"),
          [file],
          cwd,
          { ...env, ...modelEnv },
          120_000,
        );
        expect(result.code, `${where}\n${result.stderr}\n${result.stdout}`).toBe(0);
        if (page === "README.md" && file === "agent.ts") {
          // The first example a newcomer runs shows its answer on a line of its own: npx's spinner
          // clears a last line left unfinished, and the answer streamed without a newline vanished.
          expect(result.stdout).toMatch(/Sunny in Lisbon\.\n/);
        }
      });
    }

    const vitestFiles: string[] = [];
    if (blocks.some((block) => block.attrs.runner === "vitest"))
      it(`${page}: its vitest examples pass (npx vitest run)`, async () => {
        const result = await run(
          join(app(), "node_modules", ".bin", "vitest"),
          ["run", ...vitestFiles],
          app(),
          env,
        );
        expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
        expect(result.stdout).toContain(`${vitestFiles.length} passed`);
      });

    if (page === "docs/durable.md")
      it("keeps the server's data in restate-data/, where the page says", () => {
        expect(existsSync(join(app(), "restate-data"))).toBe(true);
      });

    afterAll(() => {
      for (const child of background.splice(0)) stopGroup(child);
    });
  },
);

describe("the TypeScript examples", () => {
  it("typecheck against the installed package (strict, module nodenext)", async () => {
    expect(filesByApp.size).toBeGreaterThan(0);
    for (const [app, files] of filesByApp) {
      writeFileSync(
        join(app, "tsconfig.docs.json"),
        JSON.stringify({
          compilerOptions: {
            module: "nodenext",
            target: "es2022",
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ["node"],
            typeRoots: [join(ROOT, "node_modules", "@types")],
          },
          files,
        }),
      );
      const tsc = await run(
        process.execPath,
        [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.docs.json"],
        app,
      );
      expect(tsc.stdout, app).toBe("");
      expect(tsc.code).toBe(0);
    }
  });
});
