import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// docs/architecture.md draws the source as a house of floors. This suite makes the drawing the
// rule: it parses the floor table out of the page and checks every import of every source file
// against it, so the page cannot drift from the code (issue 37 found it had: an arrow running back
// up, a circle, two folders missing from the table).

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Folders that are not the package's source: nothing in it imports them, and they are not checked. */
const NOT_SOURCE = new Set(["node_modules", "dist", "test", "bench", "examples", ...ignoredFolders()]);

/** Top folders .gitignore names (test output, coverage): whatever they hold is not the source. */
function ignoredFolders(): string[] {
  const ignore = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", ".gitignore");
  if (!existsSync(ignore)) return [];
  return readFileSync(ignore, "utf8")
    .split("\n")
    .map((line) => line.trim().replace(/^\//, "").replace(/\/$/, ""))
    .filter((line) => line !== "" && !line.startsWith("#") && !/[*?[\]/]/.test(line));
}

/** The folder name that stands for the `.ts` files at the top of the repository (the entries). */
const TOP = ".";

/**
 * Arrows the table forbids that are known and being removed. Each names its issue; delete the line
 * when the issue lands, and the test then holds the arrow out for good.
 */
const KNOWN_EXCEPTIONS: readonly { from: string; to: string; why: string }[] = [];

/** Folder → floor, as docs/architecture.md's table says; `outside` holds the "—" rows. */
interface FloorTable {
  floors: Map<string, number>;
  outside: Set<string>;
}

/** One import in a source file, resolved to a repository path. */
interface SourceImport {
  file: string;
  line: number;
  specifier: string;
  target: string;
  typeOnly: boolean;
}

/** Parses the table under "## The floors" into folder → floor. */
function floorTableOf(markdown: string): FloorTable {
  const section = markdown.split(/^## The floors.*$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('docs/architecture.md has no "## The floors" section');
  const floors = new Map<string, number>();
  const outside = new Set<string>();
  for (const row of section.split("\n").filter((l) => l.startsWith("|"))) {
    const [floorCell, folderCell] = row
      .split("|")
      .slice(1, 3)
      .map((c) => c.trim());
    if (floorCell === undefined || folderCell === undefined) continue;
    const names = [...folderCell.matchAll(/`([^`]+)`/g)].map((m) => foldersNamed(m[1]));
    const floor = Number(floorCell);
    for (const name of names.flat()) {
      if (floorCell === "—") outside.add(name);
      else if (Number.isInteger(floor)) {
        const earlier = floors.get(name);
        if (earlier !== undefined && earlier !== floor) {
          throw new Error(`docs/architecture.md puts ${name} on floors ${earlier} and ${floor}`);
        }
        floors.set(name, floor);
      }
    }
  }
  return { floors, outside };
}

/** `core/` names the folder `core`; a top-level `index.ts` names the entries' folder. */
function foldersNamed(token: string): string[] {
  if (token.endsWith("/")) return [token.slice(0, -1)];
  if (/^[\w.-]+\.ts$/.test(token)) return [TOP];
  return [];
}

/** The top-level folder a repository path belongs to (`.` for a file at the top). */
function folderOf(file: string): string {
  const parts = file.split("/");
  return parts.length === 1 ? TOP : parts[0];
}

/** Every `.ts`/`.tsx` file of the package's source, repository-relative with `/`. */
function sourceFiles(root: string, dir = ""): string[] {
  const files: string[] = [];
  for (const name of readdirSync(path.join(root, dir))) {
    if (name.startsWith(".") || (dir === "" && NOT_SOURCE.has(name))) continue;
    const relative = dir === "" ? name : `${dir}/${name}`;
    if (statSync(path.join(root, relative)).isDirectory()) files.push(...sourceFiles(root, relative));
    else if (/\.tsx?$/.test(name)) files.push(relative);
  }
  return files;
}

/** The repository-relative file a relative specifier points at (`./x.js` is `./x.ts`). */
function resolveSpecifier(file: string, specifier: string): string {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
  return joined.replace(/\.js$/, ".ts").replace(/\.jsx$/, ".tsx");
}

/** A run of code holding nothing the lexer must look at. */
const PLAIN = /[^/"'`{}]+/y;

/**
 * A file's code with its comments and template text blanked (newlines kept, so lines still count)
 * and every string literal replaced by `"#n"`, `n` indexing the returned strings: an import
 * written in a comment, a template or a string is then no import. A small lexer rather than the
 * TypeScript parser, which takes seconds over the whole source (this runs in the unit suite).
 */
function skeletonOf(text: string): { code: string; strings: string[] } {
  const strings: string[] = [];
  let code = "";
  let i = 0;
  let last = ""; // the last significant character of code, to tell a regex literal from a division
  const blank = (from: number, to: number) => text.slice(from, to).replace(/[^\n]/g, " ");
  const lexTemplate = (start: number): void => {
    // Inside a template from `start` (its backtick, or the end of a `${…}`): blanks the text and
    // lexes the code of each `${…}` as code.
    while (i < text.length && text[i] !== "`") {
      if (text[i] === "\\") i += 2;
      else if (text[i] === "$" && text[i + 1] === "{") {
        code += blank(start, i) + "  ";
        i += 2;
        lexCode("}");
        start = i;
      } else i++;
    }
    code += blank(start, ++i);
  };
  const lexCode = (until?: string): void => {
    let depth = 0;
    while (i < text.length) {
      const c = text[i];
      const next = text[i + 1];
      if (until !== undefined && c === "{") depth++;
      if (until !== undefined && c === until && depth-- === 0) {
        code += " ";
        i++;
        return;
      }
      if (c === "/" && next === "/") {
        const end = text.indexOf("\n", i);
        const stop = end === -1 ? text.length : end;
        code += blank(i, stop);
        i = stop;
      } else if (c === "/" && next === "*") {
        const end = text.indexOf("*/", i + 2);
        const stop = end === -1 ? text.length : end + 2;
        code += blank(i, stop);
        i = stop;
      } else if (c === '"' || c === "'") {
        let j = i + 1;
        while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
        strings.push(text.slice(i + 1, j));
        code += `"#${strings.length - 1}"`;
        i = j + 1;
        last = '"';
      } else if (c === "`") {
        lexTemplate(i++);
        last = "`";
      } else if (
        c === "/" &&
        (last === "" || "(,=:[!&|?{};+-*%<>~^".includes(last) || /\breturn\s*$/.test(code.slice(-20)))
      ) {
        // A regex literal: skip to its closing slash (outside a character class).
        const start = i++;
        let inClass = false;
        while (i < text.length && text[i] !== "\n" && (inClass || text[i] !== "/")) {
          if (text[i] === "\\") i++;
          else if (text[i] === "[") inClass = true;
          else if (text[i] === "]") inClass = false;
          i++;
        }
        code += blank(start, ++i);
        last = "/";
      } else {
        PLAIN.lastIndex = i;
        const run = PLAIN.exec(text)?.[0] ?? c;
        code += run;
        last = run.trimEnd().at(-1) ?? last;
        i += run.length;
      }
    }
  };
  lexCode();
  return { code, strings };
}

const STATIC_IMPORT = /(?<![\w$.])(import|export)(\s+type\b)?[^;"`]*?\bfrom\s*"#(\d+)"/g;
const BARE_IMPORT = /(?<![\w$.])import\s*"#(\d+)"/g;
const DYNAMIC_IMPORT = /(?<![\w$.])import\s*\(\s*"#(\d+)"\s*\)/g;

/**
 * Every relative import of a file: static imports, re-exports, side-effect imports and `import()`
 * (a call, or a type: both count as imports that run, the safe side for the circle check).
 */
function importsOf(file: string, text: string): SourceImport[] {
  const { code, strings } = skeletonOf(text);
  const found: SourceImport[] = [];
  const add = (index: number, at: number, typeOnly: boolean) => {
    const specifier = strings[index];
    if (!specifier.startsWith(".")) return;
    const line = code.slice(0, at).split("\n").length;
    found.push({ file, line, specifier, target: resolveSpecifier(file, specifier), typeOnly });
  };
  for (const m of code.matchAll(STATIC_IMPORT)) add(Number(m[3]), m.index + m[0].length, m[2] !== undefined);
  for (const m of code.matchAll(BARE_IMPORT)) add(Number(m[1]), m.index, false);
  for (const m of code.matchAll(DYNAMIC_IMPORT)) add(Number(m[1]), m.index, false);
  return found.sort((a, b) => a.line - b.line);
}

/**
 * What is wrong with each import crossing folders: it runs up a floor, sideways to another folder
 * of the same floor, or into or out of a folder the table does not place.
 */
function floorProblems(
  imports: readonly SourceImport[],
  table: FloorTable,
  exceptions: typeof KNOWN_EXCEPTIONS = KNOWN_EXCEPTIONS,
): string[] {
  const problems: string[] = [];
  for (const found of imports) {
    const from = folderOf(found.file);
    const to = folderOf(found.target);
    if (from === to) continue;
    if (exceptions.some((e) => e.from === from && e.to === to)) continue;
    const where = `${found.file}:${found.line} imports "${found.specifier}"`;
    const fromFloor = table.floors.get(from);
    const toFloor = table.floors.get(to);
    if (fromFloor === undefined) problems.push(`${where}, but ${from}/ has no floor in docs/architecture.md`);
    else if (toFloor === undefined) {
      const why = table.outside.has(to) ? "is outside the house" : "has no floor in docs/architecture.md";
      problems.push(`${where}, but ${to}/ ${why}`);
    } else if (toFloor > fromFloor) {
      problems.push(
        `${where}: ${from}/ (floor ${fromFloor}) imports from a higher floor, ${to}/ (floor ${toFloor})`,
      );
    } else if (toFloor === fromFloor) {
      problems.push(
        `${where}: ${from}/ and ${to}/ are side by side on floor ${fromFloor} and must not import each other`,
      );
    }
  }
  return problems;
}

/** The circles of a graph (its strongly connected parts of two or more nodes), each sorted. */
function circlesOf(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let taken: string;
    do {
      taken = stack.pop()!;
      onStack.delete(taken);
      part.push(taken);
    } while (taken !== node);
    if (part.length > 1) circles.push(part.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) connect(node);
  return circles;
}

/** A graph from imports: `key` maps an import to its two ends (or to nothing, to leave it out). */
function graphOf(
  imports: readonly SourceImport[],
  key: (found: SourceImport) => [string, string] | undefined,
): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const found of imports) {
    const ends = key(found);
    if (ends === undefined || ends[0] === ends[1]) continue;
    const set = edges.get(ends[0]) ?? new Set<string>();
    set.add(ends[1]);
    edges.set(ends[0], set);
  }
  return edges;
}

/** The imports that close a circle, named by file and line: those between its members. */
function importsWithin(
  circle: readonly string[],
  imports: readonly SourceImport[],
  nodeOf: (file: string) => string,
): string[] {
  const members = new Set(circle);
  return imports
    .filter(
      (f) =>
        nodeOf(f.file) !== nodeOf(f.target) && members.has(nodeOf(f.file)) && members.has(nodeOf(f.target)),
    )
    .map((f) => `${f.file}:${f.line} imports "${f.specifier}"`);
}

function readTable(): FloorTable {
  return floorTableOf(readFileSync(path.join(REPO, "docs", "architecture.md"), "utf8"));
}

let imports: SourceImport[] | undefined;

/** Every import of the source, read once for the suite. */
function readImports(): SourceImport[] {
  imports ??= sourceFiles(REPO).flatMap((file) =>
    importsOf(file, readFileSync(path.join(REPO, file), "utf8")),
  );
  return imports;
}

const anImport = (file: string, specifier: string, typeOnly = false): SourceImport => ({
  file,
  line: 1,
  specifier,
  target: resolveSpecifier(file, specifier),
  typeOnly,
});

describe("the house of floors in docs/architecture.md", () => {
  it("places every folder that holds source, and names no folder that is not there", () => {
    const table = readTable();
    const folders = new Set(sourceFiles(REPO).map(folderOf));
    const unplaced = [...folders].filter((f) => !table.floors.has(f)).map((f) => `${f}/`);
    expect(unplaced, "folders with .ts files missing from the floor table").toEqual([]);
    const named = [...table.floors.keys(), ...table.outside].filter((f) => f !== TOP);
    const missing = named.filter((f) => !existsSync(path.join(REPO, f))).map((f) => `${f}/`);
    expect(missing, "folders the table names that do not exist").toEqual([]);
  });

  it("has no import that runs up a floor or sideways between folders of one floor", () => {
    expect(floorProblems(readImports(), readTable())).toEqual([]);
  });

  it("has no circle between folders", () => {
    const imports = readImports();
    const folders = graphOf(imports, (f) => [folderOf(f.file), folderOf(f.target)]);
    expect(circlesOf(folders).map((circle) => importsWithin(circle, imports, folderOf))).toEqual([]);
  });

  it("has no circle between files through imports that run (type-only imports aside)", () => {
    const imports = readImports().filter((f) => !f.typeOnly);
    const files = graphOf(imports, (f) => [f.file, f.target]);
    expect(circlesOf(files).map((circle) => importsWithin(circle, imports, (file) => file))).toEqual([]);
  });

  it("keeps each known exception only while the arrow it excuses is still there", () => {
    const imports = readImports();
    const stale = KNOWN_EXCEPTIONS.filter(
      (e) => !imports.some((f) => folderOf(f.file) === e.from && folderOf(f.target) === e.to),
    );
    expect(stale, "exceptions whose arrow is gone: delete them").toEqual([]);
  });
});

describe("the floor check itself", () => {
  const table = floorTableOf(
    [
      "## The floors",
      "| floor | folder | what |",
      "| --- | --- | --- |",
      "| 1 | `core/` | x |",
      "| 2 | `rules/` | x |",
      "| 3 | `actors/` | x |",
      "| 4 | `machines/` | x |",
      "| 5 | `http/` | x |",
      "| 5 | `durable/` | x |",
      "| 6 | `index.ts`, `browser.ts`, ... | entries |",
      "| — | `test/` | x |",
      "## Next",
    ].join("\n"),
  );

  it("reads floors, shared floors, the entries and the outside rows from the table", () => {
    expect(table.floors.get("core")).toBe(1);
    expect(table.floors.get("http")).toBe(table.floors.get("durable"));
    expect(table.floors.get(TOP)).toBe(6);
    expect([...table.outside]).toEqual(["test"]);
  });

  it("names the file and the import that runs up a floor", () => {
    const problems = floorProblems(
      [anImport("actors/model-stream.actor.ts", "../machines/output.logic.js")],
      table,
      [],
    );
    expect(problems).toEqual([
      'actors/model-stream.actor.ts:1 imports "../machines/output.logic.js": actors/ (floor 3) imports from a higher floor, machines/ (floor 4)',
    ]);
  });

  it("refuses an arrow between folders of one floor unless it is a known exception", () => {
    const sideways = [anImport("http/internal/some-backend.ts", "../../durable/session-client.js", true)];
    expect(floorProblems(sideways, table, [])[0]).toMatch(/http\/ and durable\/ are side by side on floor 5/);
    expect(floorProblems(sideways, table, [{ from: "http", to: "durable", why: "test" }])).toEqual([]);
  });

  it("refuses imports of folders the table leaves out or puts outside the house", () => {
    const problems = floorProblems(
      [anImport("core/a.ts", "../test/helpers.js"), anImport("wake/a.ts", "../core/b.js")],
      table,
      [],
    );
    expect(problems).toEqual([
      'core/a.ts:1 imports "../test/helpers.js", but test/ is outside the house',
      'wake/a.ts:1 imports "../core/b.js", but wake/ has no floor in docs/architecture.md',
    ]);
  });

  it("finds imports in re-exports, side-effect imports and import(), and none in comments, strings or templates", () => {
    const text = [
      'import type { A } from "../core/a.js";',
      "import {",
      "  type B,",
      "  b,",
      '} from "./b.js";',
      'export type { C } from "../core/c.js";',
      '// import { c } from "../machines/c.js";',
      '/* export * from "../machines/c.js"; */',
      'const d = () => import("../agent/d.js");',
      "const s = \"import { x } from '../machines/s.js'\";",
      "const t = `import { x } from \"../machines/t.js\" ${f(`${'./n.js'}`)} ${import('./e.js')}`;",
      'const r = /["`]/g; export * from "./f.js";',
      'import "./g.js";',
      'import { h } from "xstate";',
    ].join("\n");
    const found = importsOf("actors/x.ts", text).map((f) => [f.line, f.target, f.typeOnly]);
    expect(found).toEqual([
      [1, "core/a.ts", true],
      [5, "actors/b.ts", false],
      [6, "core/c.ts", true],
      [9, "agent/d.ts", false],
      [11, "actors/e.ts", false],
      [12, "actors/f.ts", false],
      [13, "actors/g.ts", false],
    ]);
  });

  it("finds a circle, and none in a chain", () => {
    const circle = new Map([
      ["testing/explore.ts", new Set(["testing/internal/run-path.ts"])],
      ["testing/internal/run-path.ts", new Set(["testing/properties.ts"])],
      ["testing/properties.ts", new Set(["testing/explore.ts"])],
    ]);
    expect(circlesOf(circle)).toEqual([
      ["testing/explore.ts", "testing/internal/run-path.ts", "testing/properties.ts"],
    ]);
    expect(
      circlesOf(
        new Map([
          ["a", new Set(["b"])],
          ["b", new Set(["c"])],
        ]),
      ),
    ).toEqual([]);
  });
});
