import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import commonjsImport from "@rollup/plugin-commonjs";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import replaceImport from "@rollup/plugin-replace";
import * as esbuild from "esbuild";
import { rollup } from "rollup";
import { build as viteBuild } from "vite";
import webpack from "webpack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appLockFile, mustRun, packCheckout, ROOT } from "./package-install-pack.js";

// A web app as a new user makes one: the packed tarball, zod and React, and none of the optional
// SDKs (no @google/genai, no Bedrock client, no Restate, no @ai-sdk/provider). Each of the four
// bundlers apps use (esbuild, Vite, webpack 5, Rollup) must bundle every entry that declares a
// `browser` condition, and a page built with each must run; the declarations of the entries a page
// or a host imports must type-check under `strict` with `skipLibCheck: false`. docs/package.md.

// Both plugins declare CommonJS types for what is, to an ES importer, their default export.
const commonjs = commonjsImport as unknown as typeof commonjsImport.default;
const replace = replaceImport as unknown as typeof replaceImport.default;

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, string | Record<string, unknown>>;
  peerDependencies: Record<string, string>;
};
const devVersion = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string })
    .version;

/** The subpaths that declare a browser condition, as an app imports them. */
const browserEntries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === "object" && "browser" in target)
  .map(([subpath]) => (subpath === "." ? "agent-machine" : `agent-machine/${subpath.slice(2)}`));

/** A page: an agent in the page, its transcript as useChat holds it, a React store of it. */
const PAGE = `
import { createAgent, scripted } from "agent-machine";
import { toUIMessages } from "agent-machine/protocols";
import { createAgentStore } from "agent-machine/react";
globalThis.runPage = async () => {
  const agent = createAgent({ provider: scripted([{ text: "Hello from the page" }]) });
  const store = createAgentStore(agent);
  await agent.prompt("Hi");
  const parts = toUIMessages(agent.messages).map((m) => m.role + ": " + m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""));
  return { parts, storeMessages: store.getSnapshot().messages.length };
};
`;

let work: string;
let app: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "agent-machine-bundlers-"));
  const packed = await packCheckout(work);
  app = join(work, "app");
  mkdirSync(app);
  const tarball = `file:../${packed.filename}`;
  const dependencies = {
    "agent-machine": tarball,
    zod: pkg.peerDependencies.zod!,
    react: pkg.peerDependencies.react!,
    "@types/react": `^${devVersion("@types/react")}`,
  };
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module", dependencies }),
  );
  writeFileSync(join(app, "package-lock.json"), JSON.stringify(appLockFile(tarball, dependencies)));
  await mustRun("npm", ["ci", "--offline", "--no-audit", "--no-fund"], app);
  for (const entry of browserEntries)
    writeFileSync(join(app, `${fileOf(entry)}.js`), `export * from "${entry}";\n`);
  writeFileSync(join(app, "page.js"), PAGE);
}, 300_000);

afterAll(async () => {
  await esbuild.stop();
  if (work) await rm(work, { recursive: true, force: true });
}, 300_000);

const fileOf = (entry: string) => `entry-${entry.replace(/\W/g, "_")}`;

/** A bundle: its code, and the modules it left for the page to load (none, for a web page). */
interface Bundle {
  code: string;
  external: string[];
}

/** Each bundler as an app configures it for a web page: the module `file` of the app → one ES file. */
const bundlers: Record<string, (file: string) => Promise<Bundle>> = {
  async esbuild(file) {
    const result = await esbuild.build({
      entryPoints: [join(app, file)],
      absWorkingDir: app,
      bundle: true,
      platform: "browser",
      format: "esm",
      minify: true,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const [output] = Object.values(result.metafile.outputs);
    return {
      code: result.outputFiles[0]!.text,
      external: output!.imports.filter((entry) => entry.external).map((entry) => entry.path),
    };
  },
  async vite(file) {
    const output = (await viteBuild({
      root: app,
      configFile: false,
      logLevel: "silent",
      mode: "production",
      build: {
        write: false,
        lib: { entry: join(app, file), formats: ["es"], fileName: "out" },
      },
    })) as RollupLikeOutput[] | RollupLikeOutput;
    return ofChunks((Array.isArray(output) ? output[0]! : output).output);
  },
  async webpack(file) {
    const outDir = join(work, "webpack", file);
    const stats = await new Promise<webpack.Stats>((resolve, reject) =>
      webpack(
        {
          mode: "production",
          target: "web",
          context: app,
          entry: join(app, file),
          // An ES module that keeps the entry's exports (else webpack drops what no one uses).
          experiments: { outputModule: true },
          // Terser is most of webpack's time here (a minute an entry on a loaded CI machine), and
          // resolving, not minifying, is what this checks.
          optimization: { minimize: false },
          output: { path: outDir, filename: "out.js", publicPath: "", library: { type: "module" } },
        },
        (error, result) => (error ? reject(error) : resolve(result!)),
      ),
    );
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
    const modules = stats.toJson({ all: false, modules: true, nestedModules: true }).modules ?? [];
    const external = modules
      .filter((module) => module.moduleType?.startsWith("external"))
      .map((module) => module.name!);
    return { code: readFileSync(join(outDir, "out.js"), "utf8"), external };
  },
  async rollup(file) {
    const bundle = await rollup({
      input: join(app, file),
      onwarn: () => {},
      plugins: [
        replace({
          preventAssignment: true,
          values: { "process.env.NODE_ENV": JSON.stringify("production") },
        }),
        nodeResolve({ browser: true, rootDir: app }),
        commonjs(),
      ],
    });
    try {
      const { output } = await bundle.generate({ format: "es", inlineDynamicImports: true });
      return ofChunks(output as RollupLikeOutput["output"]);
    } finally {
      await bundle.close();
    }
  },
};

interface RollupLikeOutput {
  output: { type: string; fileName: string; code?: string; imports?: string[]; dynamicImports?: string[] }[];
}

/** Rollup's (and Vite's) output chunks as one bundle. */
function ofChunks(output: RollupLikeOutput["output"]): Bundle {
  const chunks = output.filter((chunk) => chunk.type === "chunk");
  const own = new Set(chunks.map((chunk) => chunk.fileName));
  return {
    code: chunks.map((chunk) => chunk.code!).join("\n"),
    external: chunks
      .flatMap((chunk) => [...(chunk.imports ?? []), ...(chunk.dynamicImports ?? [])])
      .filter((name) => !own.has(name)),
  };
}

describe.each(Object.keys(bundlers))("%s, in a fresh app without the optional SDKs", (name) => {
  const bundle = bundlers[name]!;

  it.each(browserEntries)(
    "bundles %s",
    async (entry) => {
      const { code, external } = await bundle(`${fileOf(entry)}.js`);
      expect(code.length).toBeGreaterThan(0);
      // Everything is in the bundle: no module (a node: built-in, a missing SDK) left for the page.
      expect(external).toEqual([]);
    },
    120_000,
  );

  it("builds a page that runs an agent and shows its messages with toUIMessages", async () => {
    const { code } = await bundle("page.js");
    const file = join(work, `page-${name}.mjs`);
    // Our modules' map comments pass through an unminified bundle; their maps are not beside it.
    writeFileSync(file, code.replace(/^\/\/# sourceMappingURL=.*$/gm, ""));
    await import(pathToFileURL(file).href);
    const runPage = (globalThis as { runPage?: () => Promise<unknown> }).runPage!;
    delete (globalThis as { runPage?: unknown }).runPage;
    expect(await runPage()).toEqual({
      parts: ["user: Hi", "assistant: Hello from the page"],
      storeMessages: 2,
    });
  }, 120_000);
});

describe("the declarations, in a fresh app without the optional SDKs", () => {
  it("type-check under strict with skipLibCheck: false, for every entry a page or a host imports", async () => {
    writeFileSync(
      join(app, "types.ts"),
      [
        'import { createAgent, scripted } from "agent-machine";',
        'import { createAgent as inPage } from "agent-machine/browser";',
        'import { toUIMessages, toAgUiMessages, type UIMessage, type HostedThread } from "agent-machine/protocols";',
        'import { createSessionHost } from "agent-machine/http";',
        'import { useAgent } from "agent-machine/react";',
        "const agent = createAgent({ provider: scripted([]) });",
        "const ui: UIMessage[] = toUIMessages(agent.messages);",
        "const thread: HostedThread | undefined = undefined;",
        "export { ui, thread, inPage, toAgUiMessages, createSessionHost, useAgent };",
      ].join("\n"),
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          target: "es2022",
          module: "esnext",
          moduleResolution: "bundler",
          lib: ["es2023", "dom", "dom.iterable"],
          // The host's entry names Node's http types (serveNode); a host has @types/node.
          typeRoots: [join(ROOT, "node_modules", "@types")],
          types: ["node"],
        },
        files: ["types.ts"],
      }),
    );
    const result = await mustRun(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", app],
      app,
    ).catch((error: Error) => ({ code: 1, stdout: error.message, stderr: "" }));
    expect(result.stdout).toBe("");
  }, 180_000);
});
