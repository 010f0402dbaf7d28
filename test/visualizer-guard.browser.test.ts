// The visualizer against other sites and missing tokens, and the Stately inspector's browser side:
// the offline hint of its bridge page, and the `agent-machine/browser` entry bundled for a real page.
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { createStatelyInspector, scripted } from "../index.js";
import { gateTool, useBrowser, watchPage } from "./visualizer-page.js";

const suite = useBrowser();
const { cleanups } = suite;

/** A web server on another port of 127.0.0.1: another origin, like any site the user has open. */
async function serve(routes: Record<string, string>): Promise<string> {
  const server: Server = createServer((request, response) => {
    const body = routes[(request.url ?? "/").split("?")[0]!];
    if (body === undefined) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}

describe("the visualizer against other sites", () => {
  it("cannot be framed: a click on Approve inside another site's iframe reaches nothing", async () => {
    const deploy = gateTool("deploy");
    const { agent, server } = await suite.open({
      provider: scripted([{ toolCalls: [{ name: "deploy", id: "call_prod" }] }, { text: "done" }]),
      tools: [deploy.tool],
      permissions: { check: () => ({ behavior: "ask" }) },
    });
    const run = agent.prompt("Deploy to prod");
    await expect.poll(() => agent.pendingApprovals().length).toBe(1);

    const evil = await serve({
      "/": `<!doctype html><h1>Win a prize!</h1><iframe id="victim" src="${server.url}" width="1200" height="900"></iframe>`,
    });
    const page = await suite.browser.newPage();
    cleanups.push(() => page.close());
    await page.goto(evil);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    await expect.poll(() => frame!.url()).toMatch(/^chrome-error:/);
    expect(await frame!.locator('[data-testid="approve"]').count()).toBe(0);
    await page.mouse.click(300, 400);
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["call_prod"]);
    agent.abort();
    await run;
  });

  it("says how to get in when the address has no token or a wrong one, and connects nobody", async () => {
    const { agent, server } = await suite.open({ provider: scripted([]) });
    for (const [url, text] of [
      [`http://127.0.0.1:${server.port}/`, "needs its access token"],
      [`http://127.0.0.1:${server.port}/?token=not-the-token`, "token is not this server's"],
    ] as const) {
      const page = await suite.browser.newPage();
      cleanups.push(() => page.close());
      await page.goto(url);
      await expect.poll(() => page.locator("#notice").textContent()).toContain(text);
      expect(await page.locator(".connection.open").count()).toBe(0);
      expect(await page.locator('[data-testid="steer-button"]').isDisabled()).toBe(true);
    }
    expect(agent.id).toBeTruthy();
  });
});

describe("the Stately inspector in a browser", () => {
  it("explains, while the inspector cannot load, that it needs its site and that our page works offline", async () => {
    // An inspector URL nothing answers: what a machine without internet sees of stately.ai.
    const offline = await createStatelyInspector({ inspectorUrl: "http://127.0.0.1:9/inspect" });
    cleanups.push(() => offline.stop());
    const page = await suite.browser.newPage();
    const problems = watchPage(page);
    cleanups.push(() => page.close());
    await page.goto(offline.url!);
    const hint = page.locator("#hint");
    await hint.waitFor();
    expect(await hint.textContent()).toMatch(/needs the internet.*visualize\(agent\)/s);
    expect(await hint.isVisible()).toBe(true);
    expect(problems).toEqual([]);

    // Once the inspector frame says it is connected, the hint goes.
    const stub = await serve({
      "/inspect": `<!doctype html><script>parent.postMessage({ type: "@statelyai.connected" }, "*")</script>`,
    });
    const online = await createStatelyInspector({ inspectorUrl: `${stub}/inspect` });
    cleanups.push(() => online.stop());
    await page.goto(online.url!);
    await page.locator("#hint").waitFor({ state: "hidden" });
  });

  it("runs from the agent-machine/browser entry, bundled with no Node stand-ins, and posts sanitized events", async () => {
    const bundle = await build({
      stdin: {
        contents: `
          import { createActor, setup, assign } from "xstate";
          import { createStatelyBrowserInspector } from "./browser.ts";
          const machine = setup({}).createMachine({
            id: "inBrowser",
            context: { apiKey: "sk-browser-secret", count: 0 },
            initial: "idle",
            states: { idle: { on: { GO: { target: "busy", actions: assign({ count: 1 }) } } }, busy: {} },
          });
          const iframe = document.getElementById("inspector");
          const inspector = await createStatelyBrowserInspector({ iframe, url: location.origin + "/inspect" });
          const actor = createActor(machine, { inspect: inspector.inspect }).start();
          actor.send({ type: "GO" });
          window.ready = true;
        `,
        resolveDir: join(import.meta.dirname, ".."),
        loader: "ts",
      },
      bundle: true,
      format: "esm",
      platform: "browser",
      write: false,
      logLevel: "silent",
    });
    const code = bundle.outputFiles[0]!.text;
    expect(code).not.toMatch(/from\s*["']node:/);
    const site = await serve({
      "/": `<!doctype html><iframe id="inspector" src="/inspect"></iframe><script type="module" src="/app.js"></script>`,
      "/inspect": `<!doctype html><script>
        window.received = [];
        addEventListener("message", (e) => window.received.push(e.data));
      </script>`,
    });
    const page = await suite.browser.newPage();
    const problems = watchPage(page);
    cleanups.push(() => page.close());
    // The bundle is served from the page's own origin, as an app would serve its build.
    await page.route("**/app.js", (route) => route.fulfill({ contentType: "text/javascript", body: code }));
    await page.goto(site);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const frame = page.frames().find((f) => f.url().endsWith("/inspect"))!;
    await frame.waitForLoadState("load");
    // What the Stately inspector does once its app has booted: say it is connected.
    await frame.evaluate(() => parent.postMessage({ type: "@statelyai.connected" }, "*"));
    await expect
      .poll(() =>
        frame.evaluate(() => JSON.stringify((window as unknown as { received: unknown[] }).received)),
      )
      .toContain('"busy"');
    const received = await frame.evaluate(() =>
      JSON.stringify((window as unknown as { received: unknown[] }).received),
    );
    expect(received).toContain("inBrowser");
    expect(received).not.toContain("sk-browser-secret");
    expect(received).toContain("[redacted]");
    expect(problems).toEqual([]);
  });
});
