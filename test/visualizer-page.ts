// What the visualizer's browser suites share: a page open on a live agent, with every page error,
// console error and failed request collected (a test fails if there was any).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentOptions,
  createAgent,
  defineTool,
  type VisualizerServer,
  visualize,
} from "../index.js";
import type { VisualizeOptions } from "../visualizer/server.js";
import { launchBrowser } from "./browser.js";

export const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts");

/** Sleeps for `ms`, or until the call is aborted. */
export const sleep = defineTool({
  name: "sleep",
  description: "Waits a while",
  parameters: z.object({ ms: z.number() }),
  readOnly: true,
  execute: ({ ms }, { signal }) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve(`slept ${ms} ms`), ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error("interrupted"));
      });
    }),
});

export { gateTool } from "./helpers.js";

/** Collects what went wrong in a page: script errors, console errors, HTTP errors. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  return problems;
}

export interface OpenPage {
  agent: Agent;
  server: VisualizerServer;
  page: Page;
}

type PageOptions = VisualizeOptions & { width?: number; height?: number };

/**
 * One browser for a test file: launched before its tests and closed after them; `cleanups` run after
 * each test, newest first; `open` serves an agent's page in it.
 */
export function useBrowser() {
  let browser: Browser | undefined;
  const cleanups: (() => unknown)[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
    await mkdir(ARTIFACTS, { recursive: true });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser(): Browser {
      return browser!;
    },
    cleanups,
    open: (options: AgentOptions, pageOptions?: PageOptions) =>
      openPage(browser!, cleanups, options, pageOptions),
  };
}

/** Creates an agent, serves its page, opens it and waits until it is connected and idle. */
export async function openPage(
  browser: Browser,
  cleanups: (() => unknown)[],
  options: AgentOptions,
  {
    width = 1440,
    height = 1100,
    ...serverOptions
  }: VisualizeOptions & { width?: number; height?: number } = {},
): Promise<OpenPage> {
  const agent = createAgent(options);
  const server = await visualize(agent, { port: 0, ...serverOptions });
  const page = await browser.newPage({ viewport: { width, height } });
  const problems = watchPage(page);
  cleanups.push(async () => {
    await page.close();
    await server.close();
    agent.stop();
    expect(problems).toEqual([]);
  });
  await page.goto(server.url);
  await page.locator(".connection.open").waitFor();
  await page.locator('[data-state="agent.idle"].active').waitFor();
  return { agent, server, page };
}

/** The lanes the page shows, in order. */
export const lanes = (page: Page) =>
  page.$$eval("[data-lane]", (rows) =>
    rows.map((row) => {
      const data = (row as HTMLElement).dataset;
      return {
        id: data.lane!,
        tool: data.tool!,
        outcome: data.outcome!,
        start: data.start ? Number(data.start) : undefined,
        end: data.end ? Number(data.end) : undefined,
      };
    }),
  );
