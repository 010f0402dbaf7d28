import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanEnv,
  removeDir,
  runCliProcess,
  sessionsDirOf,
  startTerminalCli,
  TEST_SCRIPT,
  type TerminalCli,
  tempDir,
} from "./fixtures/cli-harness.js";
import { pngImage } from "./fixtures/images.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicMessage } from "./fixtures/provider-wire.js";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** The one session of a workspace: its folder and the JSON files' text. */
function sessionFiles(workspace: string) {
  const root = sessionsDirOf(workspace);
  const [id] = readdirSync(root);
  const dir = path.join(root, id!);
  return {
    dir,
    images: existsSync(path.join(dir, "images")) ? readdirSync(path.join(dir, "images")) : [],
    json: ["snapshot.json", "events.jsonl"]
      .map((file) => readFileSync(path.join(dir, file), "utf8"))
      .join("\n"),
  };
}

/** A size as the screen shows it. */
const kb = (bytes: Buffer) => `${(bytes.length / 1024).toFixed(1)} KB`;

/** A message as sent, without the prompt-cache breakpoints the adapter puts on the last block. */
function withoutCacheMarks(message: { content: Record<string, unknown>[] }) {
  return {
    ...message,
    content: message.content.map(({ cache_control: _cache, ...block }) => block),
  };
}

// The real command in a pseudo-terminal (and with --print), a PNG mentioned or pasted as a path.
describe("agent-machine: images in a prompt", () => {
  let cli: TerminalCli | undefined;
  let server: ProviderFixtureServer | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await cli?.kill();
    await server?.close();
    for (const dir of dirs.splice(0)) removeDir(dir);
    cli = undefined;
    server = undefined;
  });
  const workspace = () => {
    const dir = tempDir();
    dirs.push(dir);
    return dir;
  };
  const start = (dir: string, model: string) => {
    cli = startTerminalCli(["--model", model], {
      cwd: dir,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
    });
    return cli;
  };

  it("attaches a PNG by @mention and one pasted as a path: the model gets image parts, the line names them", async () => {
    const dir = workspace();
    const shot = pngImage(20, 20, true);
    writeFileSync(path.join(dir, "shot.png"), shot);
    // A file dragged onto the terminal from elsewhere: pasted as its quoted path.
    const elsewhere = workspace();
    mkdirSync(path.join(elsewhere, "Screen Shots"));
    const dragged = path.join(elsewhere, "Screen Shots", "pic two.png");
    const pic = pngImage(24, 16, true);
    writeFileSync(dragged, pic);

    const term = start(dir, "claude-test");
    await term.waitFor(/^›/m);
    term.type("what is in @shot.png?");
    term.keys("Enter");
    // The scripted model answers with the text it got and each image's type and size.
    let screen = await term.waitFor(`heard: what is in @shot.png? | images: image/png ${shot.length} bytes`);
    expect(screen).toContain(`› what is in @shot.png? (image shot.png (PNG, ${kb(shot)}, 20×20))`);
    expect(screen).toContain(`+ image shot.png (PNG, ${kb(shot)}, 20×20) attached`);

    term.type(`${PASTE_START}'${dragged}'${PASTE_END}`);
    await term.waitFor(/^› \[image #1: pic two\.png\]$/m);
    term.type("and this one?");
    term.keys("Enter");
    screen = await term.waitFor(
      `heard: [image #1: pic two.png] and this one? | images: image/png ${pic.length} bytes`,
    );
    expect(screen).toContain(`(image pic two.png (PNG, ${kb(pic)}, 24×16))`);

    // A pasted text that is not a file stays text.
    term.type(`${PASTE_START}plain words${PASTE_END}`);
    term.keys("Enter");
    await term.waitFor("heard: plain words");

    // Each image is kept once, as a file of the session; its JSON files hold no base64.
    const files = sessionFiles(dir);
    expect(files.images).toHaveLength(2);
    for (const image of [shot, pic])
      expect(files.json).not.toContain(image.toString("base64").slice(200, 300));
  });

  it("sends the image to Anthropic as a base64 block, keeps it out of the session's JSON, and sends it again after --continue", async () => {
    server = await startProviderServer();
    const dir = workspace();
    const shot = pngImage(40, 40, true);
    const data = shot.toString("base64");
    writeFileSync(path.join(dir, "shot.png"), shot);
    server.reply(
      { type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["A square of noise."] }] }) },
      { type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["Grey, mostly."] }] }) },
    );
    const env = cleanEnv({ ANTHROPIC_API_KEY: "sk-ant-test-images", ANTHROPIC_BASE_URL: server.url });
    const first = await runCliProcess(["--print", "--model", "claude-fixture-1", "describe @shot.png"], {
      cwd: dir,
      env,
    });
    expect(first).toMatchObject({ code: 0, stdout: "A square of noise.\n", stderr: "" });
    const sent = [
      { type: "text", text: "describe @shot.png" },
      { type: "text", text: "\n[image: shot.png]" },
      { type: "image", source: { type: "base64", media_type: "image/png", data } },
    ];
    expect(withoutCacheMarks(server.requests[0]!.body.messages[0])).toEqual({ role: "user", content: sent });

    const files = sessionFiles(dir);
    expect(files.images).toHaveLength(1);
    expect(readFileSync(path.join(files.dir, "images", files.images[0]!))).toEqual(shot);
    expect(files.json).not.toContain(data.slice(0, 100));

    const second = await runCliProcess(
      ["--continue", "--print", "--model", "claude-fixture-1", "and the colour?"],
      {
        cwd: dir,
        env,
      },
    );
    expect(second).toMatchObject({ code: 0, stdout: "Grey, mostly.\n" });
    // The resumed transcript holds the image, read back from its file, byte for byte.
    const messages = server.requests[1]!.body.messages;
    expect(withoutCacheMarks(messages[0])).toEqual({ role: "user", content: sent });
    expect(JSON.stringify(messages.at(-1))).toContain("and the colour?");
  });

  it("refuses an image for a text-only model (line given back) and one too large for any model, sending nothing", async () => {
    const dir = workspace();
    writeFileSync(path.join(dir, "shot.png"), pngImage(3, 2));
    writeFileSync(path.join(dir, "big.png"), pngImage(1200, 1200, true));

    // --print: a usage error, nothing sent, no session made.
    const printed = await runCliProcess(["--print", "--model", "gpt-3.5-turbo", "what is @shot.png?"], {
      cwd: dir,
      env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
    });
    expect(printed.code).toBe(2);
    expect(printed.stdout).toBe("");
    expect(printed.stderr).toContain("Not sent: gpt-3.5-turbo does not take images (shot.png)");
    expect(existsSync(sessionsDirOf(dir)) ? readdirSync(sessionsDirOf(dir)) : []).toEqual([]);

    const term = start(dir, "gpt-3.5-turbo");
    await term.waitFor(/^›/m);
    term.type("what is @shot.png?");
    term.keys("Enter");
    let screen = await term.waitFor("Not sent: gpt-3.5-turbo does not take images (shot.png)");
    // The line is back in the input, to edit.
    expect(screen).toMatch(/^› what is @shot\.png\?$/m);
    expect(screen).not.toContain("heard:");
    term.keys("C-u");
    term.type("/model");
    term.keys("Enter");
    await term.waitFor("Model: gpt-3.5-turbo, text only (no images)");
    term.type("describe big.png in words");
    term.keys("Enter");
    await term.waitFor("heard: describe big.png in words");
    await cli!.kill();

    // Too large: refused whatever the model, by mention and by paste.
    const again = start(dir, "claude-test");
    await again.waitFor(/^›/m);
    again.type("what is @big.png?");
    again.keys("Enter");
    screen = await again.waitFor("Not sent: big.png is 4.12 MB, over the 3.75 MB an image may have");
    expect(screen).toMatch(/^› what is @big\.png\?$/m);
    again.keys("C-u");
    again.type(`${PASTE_START}${path.join(dir, "big.png")}${PASTE_END}`);
    screen = await again.waitFor("big.png not attached: 4.12 MB, over the 3.75 MB");
    // Nothing went into the line for it, and nothing reached the model.
    expect(screen).toMatch(/^›$/m);
    expect(screen).not.toContain("heard:");
  });

  it("Ctrl-V attaches the clipboard's image through a clipboard tool, and says so when there is none", async () => {
    const dir = workspace();
    const copied = pngImage(30, 20, true);
    writeFileSync(path.join(dir, "copied.bin"), copied);
    // A stand-in for wl-paste (Wayland's clipboard tool), first on PATH: it offers one PNG.
    const tools = workspace();
    writeFileSync(
      path.join(tools, "wl-paste"),
      `#!/bin/sh\ncase "$1" in --list-types) printf 'text/plain\\nimage/png\\n';; *) cat '${path.join(dir, "copied.bin")}';; esac\n`,
    );
    chmodSync(path.join(tools, "wl-paste"), 0o755);
    const env = cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT });
    cli = startTerminalCli(["--model", "claude-test"], {
      cwd: dir,
      env: { ...env, PATH: `${tools}${path.delimiter}${env.PATH ?? ""}` },
    });
    await cli.waitFor(/^›/m);
    cli.type("look at ");
    cli.keys("C-v");
    await cli.waitFor(/^› look at \[image #1: clipboard\.png\]$/m);
    cli.type("please");
    cli.keys("Enter");
    const screen = await cli.waitFor(
      `heard: look at [image #1: clipboard.png] please | images: image/png ${copied.length} bytes`,
    );
    expect(screen).toContain(`(image clipboard.png (PNG, ${kb(copied)}, 30×20))`);
    await cli.kill();

    // No clipboard tool on PATH: Ctrl-V says what to install; the line is left as it was.
    const empty = workspace();
    cli = startTerminalCli(["--model", "claude-test"], { cwd: dir, env: { ...env, PATH: empty } });
    await cli.waitFor(/^›/m);
    cli.type("look at ");
    cli.keys("C-v");
    const said = await cli.waitFor(
      "Ctrl-V: no clipboard tool to read an image with: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS)",
    );
    expect(said).toMatch(/^› look at$/m);
  });
});
