import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createAgent, scripted } from "../index.js";
import { apply, emptyModel } from "../visualizer/page/model.js";
import { toWire } from "../visualizer/wire.js";

describe("the visualizer page and output checks", () => {
  it("shows every output verdict on the run's heading and folds the partial objects into one log line", async () => {
    const agent = createAgent({
      provider: scripted([{ text: '{"n": "x"}' }, { text: '{"n": 13}', chunkSize: 3 }, { text: '{"n": 7}' }]),
      output: z.object({ n: z.number() }),
      outputFilters: [
        function lucky({ output }) {
          return (output as { n: number }).n === 13 ? { reject: "13 is unlucky" } : { pass: true };
        },
        () => ({ warn: "small number" }),
      ],
    });
    const model = emptyModel();
    agent.events$.subscribe((event) => apply(model, toWire(event)));
    const outcome = await agent.prompt("Pick a number");
    expect(outcome.output).toEqual({ n: 7 });

    expect(model.runs).toHaveLength(1);
    expect(model.runs[0]!.reason).toBe("stop");
    expect(model.runs[0]!.checks).toEqual([
      {
        verdict: "invalid",
        label: "invalid output 1/3",
        title: expect.stringMatching(
          /^invalid output, attempt 1 of 3 \(retry\): The answer does not match the schema/,
        ),
      },
      {
        verdict: "reject",
        label: "lucky reject",
        title: "output filter lucky: reject: 13 is unlucky (retry)",
      },
      { verdict: "pass", label: "lucky pass", title: "output filter lucky: pass" },
      {
        verdict: "warn",
        label: "outputFilters[1] warn",
        title: "output filter outputFilters[1]: warn: small number",
      },
    ]);
    const rows = model.log.map((row) => row.type);
    expect(rows.filter((type) => type === "output_filter")).toHaveLength(3);
    expect(rows.filter((type) => type === "output_invalid")).toHaveLength(1);
    // The second answer streamed in several output_delta events, folded into one line per answer.
    const deltaRows = model.log.filter((row) => row.type === "output_delta");
    expect(deltaRows.length).toBeLessThanOrEqual(3);
    expect(deltaRows.some((row) => row.detail.startsWith("×"))).toBe(true);
  });
});
