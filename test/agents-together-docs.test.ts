// docs/agents-together.md runs here as written: its app machine (block 1) and its run, persist and
// restore (block 2), then the same steps again with the assertions a reader relies on.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { createActor, waitFor } from "xstate";
import { scripted } from "../index.js";
import { expectValidTranscript } from "./helpers.js";
import { writeDocExamples } from "./fixtures/doc-examples.js";

const [app, run, handoffs, nestedApproval] = writeDocExamples("agents-together.md");
// Block 2 imports block 1 under the name a reader would give it.
writeFileSync(
  run!.file,
  readFileSync(run!.file, "utf8").replace("./support-app.js", "./agents-together-example-1.js"),
);

describe("docs/agents-together.md", () => {
  it("runs as written", async () => {
    await import(pathToFileURL(run!.file).href);
  });

  it("triage → agent → review → agent: typed triage, approval by the app's rule, restored mid-review", async () => {
    const { supportApp } = (await import(pathToFileURL(app!.file).href)) as {
      supportApp: (
        provider: ReturnType<typeof scripted>,
        refunds: string[],
      ) => Parameters<typeof createActor>[0];
    };
    const refunds: string[] = [];
    const provider = scripted([
      { text: '{"category":"billing","urgent":false}' },
      { toolCalls: [{ name: "refund", arguments: { amount: 80 } }] },
      { text: "A person will look at the refund." },
      { text: "A person will look at the refund; sorry for the trouble." },
    ]);
    const first = createActor(supportApp(provider, refunds), {
      input: { ticket: "charged 80 twice" },
    }).start();
    const review = await waitFor(first, (s) => s.matches("review"));
    expect(review.context.triage).toEqual({ category: "billing", urgent: false });
    // 80 is over the app's limit: denied, and the model read why.
    expect(refunds).toEqual([]);
    expect(JSON.stringify(review.context.transcript)).toContain("refunds of 50 or more go to a person");
    const saved = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();

    const again = createActor(supportApp(provider, refunds), { snapshot: saved }).start();
    expect(again.getSnapshot().value).toBe("review");
    again.send({ type: "review.revise", feedback: "apologise" });
    const revised = await waitFor(again, (s) => s.matches("review") && s.context.feedback === "apologise");
    // The writer revised with its earlier transcript in front of it.
    const request = provider.requests.at(-1)!;
    expect(JSON.stringify(request.messages)).toContain("charged 80 twice");
    expect(JSON.stringify(request.messages)).toContain("Revise the reply: apologise");
    expect(revised.context.draft!.reason).toBe("stop");
    expectValidTranscript(revised.context.transcript);
    again.send({ type: "review.approve" });
    expect(again.getSnapshot().status).toBe("done");
  });

  it("the handoff and nested-approval examples run as written and print what they promise", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await import(pathToFileURL(handoffs!.file).href);
      expect(log.mock.calls[0]).toEqual(["main → billing: 3 messages, 1 crossed"]);
      expect(log.mock.calls[1]![0]).toMatchObject({
        role: "assistant",
        content: [{ type: "text", text: "Refunded 20." }],
      });
      await import(pathToFileURL(nestedApproval!.file).href);
      expect(log.mock.calls[2]![0]).toMatchObject({
        content: [{ type: "text", text: "Done: 20 refunded." }],
      });
    } finally {
      log.mockRestore();
    }
  });
});
