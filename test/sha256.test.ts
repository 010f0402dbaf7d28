import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../core/sha256.js";

// The machine's structure hash (stamped on every snapshot) is SHA-256 in plain JavaScript, so a
// snapshot written before keeps its hash: the digest must be SHA-256's, byte for byte.
describe("sha256Hex", () => {
  it("gives node:crypto's SHA-256 at every padding edge, for multi-byte text and a long input", () => {
    const texts = ["", "abc", "é😀中", "x".repeat(100_000)];
    for (let length = 50; length <= 130; length++) texts.push("a".repeat(length));
    for (const text of texts) {
      expect(sha256Hex(text), `${text.length} characters`).toBe(
        createHash("sha256").update(text, "utf8").digest("hex"),
      );
    }
  });

  it("gives the standard's test vector", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
