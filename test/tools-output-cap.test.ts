import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createHeadTailBuffer } from "../tools/internal/head-tail-buffer.js";

const lineCount = (text: string) => text.split("\n").length - 1;

describe("head + tail output cap (bash)", () => {
  it("keeps everything when the output fits", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 20 }), (chunks) => {
        const full = chunks.join("");
        const buffer = createHeadTailBuffer({ headBytes: 1000, tailBytes: 1000 });
        for (const chunk of chunks) buffer.push(Buffer.from(chunk));
        expect(buffer.truncated).toBe(Buffer.byteLength(full) > 2000);
        if (!buffer.truncated) expect(buffer.render()).toBe(full);
      }),
    );
  });

  it("shows a prefix and a suffix of whole lines, and counts every dropped line", () => {
    const line = fc
      .string({ unit: fc.constantFrom("a", "b", " ", "é"), maxLength: 60 })
      .map((text) => `${text}\n`);
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 8, max: 200 }),
        (lines, chunkSize, half) => {
          const full = lines.join("");
          const buffer = createHeadTailBuffer({ headBytes: half, tailBytes: half });
          const bytes = Buffer.from(full);
          for (let i = 0; i < bytes.length; i += chunkSize) buffer.push(bytes.subarray(i, i + chunkSize));
          expect(buffer.totalBytes).toBe(bytes.length);
          const rendered = buffer.render();
          if (!buffer.truncated) {
            expect(rendered).toBe(full);
            return;
          }
          const match = /\n\[\.\.\. (\d+) lines truncated \((\d+) bytes\) \.\.\.\]\n\n/.exec(rendered);
          expect(match).not.toBeNull();
          const head = rendered.slice(0, match!.index);
          const tail = rendered.slice(match!.index + match![0].length);
          expect(full.startsWith(head)).toBe(true);
          expect(full.endsWith(tail)).toBe(true);
          expect(head.length).toBeLessThanOrEqual(half);
          expect(tail.length).toBeLessThanOrEqual(half);
          // Whole lines: the head ends at a line end, the tail starts at a line start; only a window
          // that holds no line end at all (one line longer than the window) shows a part of a line.
          expect(head.endsWith("\n") || !head.includes("\n")).toBe(true);
          const tailStartsLine = full.slice(0, full.length - tail.length).endsWith("\n");
          expect(tailStartsLine || !tail.slice(0, -1).includes("\n")).toBe(true);
          expect(Number(match![2])).toBe(bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail));
          expect(Number(match![1])).toBe(Math.max(1, lineCount(full) - lineCount(head) - lineCount(tail)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
