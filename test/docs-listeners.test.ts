import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Every shell line of the docs' code blocks, with where it is. */
function shellLines(): { where: string; line: string }[] {
  const pages = ["README.md", ...readdirSync(path.join(REPO, "docs")).map((f) => path.join("docs", f))];
  const lines: { where: string; line: string }[] = [];
  for (const page of pages.filter((p) => p.endsWith(".md"))) {
    const text = readFileSync(path.join(REPO, page), "utf8");
    for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
      for (const line of block[1]!.split("\n")) if (line.trim()) lines.push({ where: page, line });
    }
  }
  return lines;
}

// A quickstart copied as it is must not expose Restate: with defaults it listens on every
// interface, and its admin API hands out every transcript and the ids that decide approvals.
describe("the docs' listeners", () => {
  it("start restate-server bound to loopback in every example", () => {
    const starts = shellLines().filter(({ line }) => /(^|\s)(npx )?restate-server(\s|$)/.test(line));
    expect(starts.length).toBeGreaterThan(0);
    for (const { where, line } of starts) expect(line, where).toMatch(/--bind-ip 127\.0\.0\.1/);
  });

  it("say what each of Restate's ports grants", () => {
    const page = readFileSync(path.join(REPO, "docs", "durable.md"), "utf8");
    const section = page.slice(page.indexOf("### What Restate's ports grant"));
    for (const port of ["8080", "9070", "5122"]) expect(section).toMatch(new RegExp(`\\*\\*${port}\\*\\*`));
    expect(section).toMatch(/POST \/query/);
  });
});
