import { createAgent, scripted, visualize } from "../index.js";
import { launchBrowser } from "../test/browser.js";

const agent = createAgent({ provider: scripted([{ text: "hi" }]) });
const server = await visualize(agent, { port: 0 });
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
await page.goto(server.url);
await page.locator('[data-state="agent.idle"].active').waitFor();
await page.waitForTimeout(500);
await page.screenshot({ path: process.argv[2] ?? "/tmp/docs21/chart.png" });
const info = await page.evaluate(() => {
  const vp = document.querySelector(".chart")!.getBoundingClientRect();
  const states = [...document.querySelectorAll(".node:not(.root)")].map((n) => {
    const r = n.querySelector("rect")!.getBoundingClientRect();
    return { id: n.getAttribute("data-state"), left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  });
  return { vp: { left: vp.left, right: vp.right, top: vp.top, bottom: vp.bottom }, out: states.filter((s) => s.right > innerWidth || s.bottom > innerHeight || s.right > vp.right + 1 || s.bottom > vp.bottom + 1), scale: (document.querySelector(".chart") as HTMLElement).dataset.scale };
});
console.log(JSON.stringify(info, null, 1));
await browser.close();
await server.close();
agent.stop();
