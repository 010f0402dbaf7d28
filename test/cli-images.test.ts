import { EventEmitter } from "node:events";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeImagePart, imageHeader, MAX_IMAGE_BYTES } from "../cli/images.js";
import { createKeyboard } from "../cli/keyboard.js";
import { attachToPrompt, expandMentions } from "../cli/mentions.js";
import { pastedFiles } from "../cli/pasted-paths.js";
import { createSessionStore } from "../cli/session-store.js";
import { removeDir, tempDir } from "./fixtures/cli-harness.js";
import { gifHead, jpegHead, pngImage, webpHead } from "./fixtures/images.js";

describe("images in a prompt", () => {
  let dir: string | undefined;
  afterEach(() => removeDir(dir));

  it("knows PNG, JPEG, GIF and WebP by their bytes, with their size in pixels", () => {
    expect(imageHeader(pngImage(3, 2))).toEqual({ mimeType: "image/png", width: 3, height: 2 });
    expect(imageHeader(jpegHead(640, 480))).toEqual({ mimeType: "image/jpeg", width: 640, height: 480 });
    expect(imageHeader(gifHead(16, 9))).toEqual({ mimeType: "image/gif", width: 16, height: 9 });
    expect(imageHeader(webpHead(1920, 1080))).toEqual({ mimeType: "image/webp", width: 1920, height: 1080 });
    expect(imageHeader(Buffer.from("not an image at all"))).toBeUndefined();
    expect(imageHeader(Buffer.from("BM\x00\x00"))).toBeUndefined(); // BMP: no provider takes it
  });

  it("@path attaches an image by its bytes (not its name), refuses other binaries and too large images", () => {
    dir = tempDir();
    writeFileSync(path.join(dir, "shot.png"), pngImage(3, 2));
    writeFileSync(path.join(dir, "renamed.txt"), pngImage(4, 4)); // a PNG under another name
    writeFileSync(path.join(dir, "fake.png"), "just text\n"); // a text file with an image's name
    writeFileSync(path.join(dir, "data.bin"), Buffer.from([1, 0, 2, 0, 3]));
    writeFileSync(path.join(dir, "big.png"), pngImage(1200, 1200, true));
    writeFileSync(path.join(dir, "wide.png"), pngImage(9000, 1));

    const expanded = expandMentions("see @shot.png and @renamed.txt, @fake.png and @data.bin", dir);
    expect(expanded.images.map((i) => [i.path, i.part.mimeType, i.width, i.height])).toEqual([
      ["shot.png", "image/png", 3, 2],
      ["renamed.txt", "image/png", 4, 4],
    ]);
    expect(expanded.images[0]!.part.data).toBe(pngImage(3, 2).toString("base64"));
    expect(expanded.attached).toEqual([{ path: "fake.png", bytes: 10, lines: 1 }]);
    expect(expanded.skipped).toEqual([
      { path: "data.bin", why: "a binary file (only PNG, JPEG, GIF and WebP images go)" },
    ]);

    expect(readFileSync(path.join(dir, "big.png")).length).toBeGreaterThan(MAX_IMAGE_BYTES);
    const big = attachToPrompt("what is @big.png?", { cwd: dir, model: "claude-sonnet-4-5" });
    expect(big).toEqual({
      refused: expect.stringMatching(
        /^big\.png is 4\.12 MB, over the 3\.75 MB an image may have \(the command does not resize images/,
      ),
    });
    const wide = attachToPrompt("what is @wide.png?", { cwd: dir, model: "claude-sonnet-4-5" });
    expect(wide).toEqual({ refused: expect.stringContaining("wide.png is 9000×1 pixels, over the 8000") });
  });

  it("a model known to take no images gets nothing; an unknown one gets the image, said so", () => {
    dir = tempDir();
    writeFileSync(path.join(dir, "shot.png"), pngImage(3, 2));
    expect(attachToPrompt("look @shot.png", { cwd: dir, model: "gpt-3.5-turbo" })).toEqual({
      refused: "gpt-3.5-turbo does not take images (shot.png)",
    });
    const unknown = attachToPrompt("look @shot.png", { cwd: dir, model: "my-local-model" });
    expect(unknown).toMatchObject({ modelUnknown: true });
    const known = attachToPrompt("look @shot.png", { cwd: dir, model: "gpt-4o" });
    if ("refused" in known) throw new Error(known.refused);
    expect(known.modelUnknown).toBe(false);
    // The text first, then each image after the label that names it.
    expect(known.content).toEqual([
      { type: "text", text: "look @shot.png" },
      { type: "text", text: "\n[image: shot.png]" },
      { type: "image", mimeType: "image/png", data: pngImage(3, 2).toString("base64") },
    ]);
    // Text alone stays a string, for every model.
    expect(attachToPrompt("just text", { cwd: dir, model: "gpt-3.5-turbo" })).toMatchObject({
      content: "just text",
    });
  });

  it("reads a pasted text as files only when all of it names files: quoted, escaped, file:// or relative", () => {
    dir = tempDir();
    mkdirSync(path.join(dir, "Screen Shots"));
    const spaced = path.join(dir, "Screen Shots", "My Shot.png");
    writeFileSync(spaced, pngImage(2, 2));
    writeFileSync(path.join(dir, "b.png"), pngImage(2, 2));
    expect(pastedFiles(`'${spaced}' `, dir)).toEqual([spaced]);
    expect(pastedFiles(spaced.replaceAll(" ", "\\ "), dir)).toEqual([spaced]);
    expect(pastedFiles(`file://${encodeURI(spaced)}`, dir)).toEqual([spaced]);
    expect(pastedFiles(spaced, dir)).toEqual([spaced]); // unquoted: the whole paste is one path
    expect(pastedFiles(`"${spaced}" b.png`, dir)).toEqual([spaced, path.join(dir, "b.png")]);
    expect(pastedFiles("b.png is broken", dir)).toBeUndefined();
    expect(pastedFiles("b.png\nb.png", dir)).toBeUndefined();
    expect(pastedFiles("Screen Shots", dir)).toBeUndefined(); // a folder
  });

  it("the keyboard marks pastes on a terminal and hands a bracketed paste over whole, across chunks", () => {
    const input = Object.assign(new EventEmitter(), {
      isTTY: true,
      setRawMode() {},
      setEncoding() {},
      resume() {},
      pause() {},
    });
    const written: string[] = [];
    const pastes: string[] = [];
    const lines: string[] = [];
    const keyboard = createKeyboard(
      input,
      {
        onLine: (line) => lines.push(line),
        onInterrupt() {},
        onEof() {},
        onChange() {},
        onPaste: (text) => (pastes.push(text), text.endsWith(".png") ? "[image #1: a.png] " : undefined),
      },
      { isTTY: true, write: (text) => written.push(text) },
    );
    expect(written).toEqual(["\x1b[?2004h"]);
    input.emit("data", "see \x1b[200~/tmp/a");
    input.emit("data", ".png\x1b[201~and ");
    expect(keyboard.text).toBe("see [image #1: a.png] and ");
    // A paste of several lines that is not an image is one block, folded in the line and sent whole
    // on Enter (its line ends are never Enter).
    input.emit("data", "\x1b[200~two\rlines\x1b[201~");
    expect(pastes).toEqual(["/tmp/a.png", "two\rlines"]);
    expect(lines).toEqual([]);
    expect(keyboard.text).toBe("see [image #1: a.png] and [pasted 2 lines]");
    input.emit("data", "\r");
    expect(lines).toEqual(["see [image #1: a.png] and two\nlines"]);
    keyboard.stop();
    expect(written).toEqual(["\x1b[?2004h", "\x1b[?2004l"]);
  });

  it("a session keeps each image once, in its folder, and reads it back whole; the JSON files hold no base64", () => {
    dir = tempDir();
    const image = pngImage(40, 40, true);
    const data = image.toString("base64");
    const message = {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", mimeType: "image/png", data },
      ],
      timestamp: 1,
    };
    const store = createSessionStore(dir, path.join(dir, "sessions"));
    const session = store.create({ cwd: dir, provider: "scripted", model: "m" });
    session.appendEvent({ type: "message_end", message });
    session.appendEvent({ type: "agent_end", messages: [message] });
    session.saveSnapshot({ status: "active", context: { messages: [message] } });

    const images = readdirSync(path.join(session.dir, "images"));
    expect(images).toHaveLength(1);
    expect(readFileSync(path.join(session.dir, "images", images[0]!))).toEqual(image);
    for (const file of ["snapshot.json", "events.jsonl"]) {
      const text = readFileSync(path.join(session.dir, file), "utf8");
      expect(text).not.toContain(data.slice(0, 200));
      expect(text).toContain(`"stored":"images/${images[0]}"`);
    }

    const again = store.open(session.id);
    expect(again.loadSnapshot()).toEqual({ status: "active", context: { messages: [message] } });
    expect(again.loadEvents()).toEqual([
      { type: "message_end", message },
      { type: "agent_end", messages: [message] },
    ]);
    // The list only counts: it reads no image.
    expect(JSON.stringify(store.inspect(session.id, { images: false }).events)).not.toContain(
      data.slice(0, 200),
    );
    // An image file gone: the transcript stays sendable, saying what is missing.
    removeDir(path.join(session.dir, "images"));
    const snapshot = store.open(session.id).loadSnapshot() as { context: { messages: (typeof message)[] } };
    expect(snapshot.context.messages[0]!.content[1]).toEqual({
      type: "text",
      text: `[image images/${images[0]} is missing from the session folder]`,
    });
  });

  it("describes an image from its part: name, type, size, pixels", () => {
    const part = { type: "image" as const, mimeType: "image/png", data: pngImage(3, 2).toString("base64") };
    expect(describeImagePart("shot.png", part)).toBe(`shot.png (PNG, ${pngImage(3, 2).length} B, 3×2)`);
  });
});
