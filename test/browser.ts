// The one place browser tests get their Chromium: the binary that ships inside the npm package
// `@sparticuz/chromium` (no apt, no download), driven by `playwright-core`. `CHROMIUM_PATH` overrides it.
import { createReadStream, createWriteStream, existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { brotliDecompressSync, createBrotliDecompress } from "node:zlib";
import { type Browser, chromium, type LaunchOptions } from "playwright-core";

/**
 * Flags for a headless Chromium on a closed network, as root, in a container: no sandbox (root), no GPU,
 * nothing that phones home (component updates, sync, background fetches), no first-run UI, and
 * `/tmp` instead of a possibly tiny `/dev/shm`.
 */
export const HEADLESS_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--disable-domain-reliability",
  "--no-first-run",
  "--no-default-browser-check",
  "--no-pings",
  "--mute-audio",
  "--disable-dev-shm-usage",
];

/** Where the packaged browser is unpacked: beside node_modules, per package version. */
interface UnpackedChromium {
  executablePath: string;
  /** A fontconfig file: the system's fonts when there are any, plus the fonts shipped with the package. */
  fontconfigFile?: string;
}

let unpacked: Promise<UnpackedChromium> | undefined;

/**
 * The Chromium the browser tests use: `CHROMIUM_PATH` when set, else the binary of `@sparticuz/chromium`,
 * unpacked once into `node_modules/.cache/agent-machine-chromium/<version>/`.
 *
 * Several test files (separate worker processes) may ask at once on a fresh clone: each unpacks into a
 * staging directory of its own and renames it into place; a rename onto a directory another worker
 * already put there fails, and that worker's copy is used. A half-written binary is never visible.
 *
 * @example
 * ```ts
 * const { executablePath } = await chromiumForTests();
 * ```
 */
export function chromiumForTests(): Promise<UnpackedChromium> {
  const override = process.env.CHROMIUM_PATH;
  if (override) {
    if (!existsSync(override)) throw new Error(`CHROMIUM_PATH=${override} does not exist`);
    return Promise.resolve({ executablePath: override });
  }
  unpacked ??= unpackPackagedChromium();
  return unpacked;
}

async function unpackPackagedChromium(): Promise<UnpackedChromium> {
  const require = createRequire(import.meta.url);
  // build/cjs/index.cjs → the package root; its package.json is not exported, so read it from disk.
  const packageRoot = dirname(dirname(dirname(require.resolve("@sparticuz/chromium"))));
  const { version } = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as {
    version: string;
  };
  const nodeModules = dirname(dirname(packageRoot));
  const target = join(nodeModules, ".cache", "agent-machine-chromium", version);
  const result: UnpackedChromium = {
    executablePath: join(target, "chromium"),
    fontconfigFile: join(target, "fonts.conf"),
  };
  if (existsSync(result.executablePath)) return result;

  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), `.${version}-staging-`));
  try {
    await pipeline(
      createReadStream(join(packageRoot, "bin", "chromium.br")),
      createBrotliDecompress(),
      createWriteStream(join(staging, "chromium"), { mode: 0o755 }),
    );
    const fonts = join(staging, "fonts");
    await mkdir(fonts);
    const archive = brotliDecompressSync(readFileSync(join(packageRoot, "bin", "fonts.tar.br")));
    for (const { name, data } of tarFiles(archive)) {
      if (/\.(ttf|otf)$/i.test(name)) await writeFile(join(fonts, basename(name)), data);
    }
    // Paths are those of the final directory: the file is read only after the rename below.
    await writeFile(join(staging, "fonts.conf"), fontconfig(target));
    await rename(staging, target);
  } catch (error) {
    // Another worker won the race: its complete copy is in place.
    if (!existsSync(result.executablePath)) throw error;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return result;
}

/** The system's font configuration when it has one (ignored when missing), plus the packaged fonts. */
function fontconfig(dir: string): string {
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>${join(dir, "fonts")}</dir>
  <cachedir>${join(dir, "fontconfig-cache")}</cachedir>
</fontconfig>
`;
}

/** The regular files of a (ustar) tar archive. */
function* tarFiles(archive: Buffer): Generator<{ name: string; data: Buffer }> {
  for (let offset = 0; offset + 512 <= archive.length;) {
    const header = archive.subarray(offset, offset + 512);
    const name = header.toString("utf8", 0, 100).replace(/\0.*$/s, "");
    if (name === "") return;
    const size = Number.parseInt(header.toString("utf8", 124, 136).replace(/\0.*$/s, "").trim() || "0", 8);
    const type = String.fromCharCode(header[156]!);
    const start = offset + 512;
    if (type === "0" || type === "\0") yield { name, data: archive.subarray(start, start + size) };
    offset = start + Math.ceil(size / 512) * 512;
  }
}

/**
 * Launches the test Chromium headless with {@link HEADLESS_FLAGS}.
 *
 * @example
 * ```ts
 * const browser = await launchBrowser();
 * const page = await browser.newPage();
 * await browser.close();
 * ```
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const { executablePath, fontconfigFile } = await chromiumForTests();
  return chromium.launch({
    ...options,
    executablePath,
    headless: true,
    args: [...HEADLESS_FLAGS, ...(options.args ?? [])],
    env: { ...process.env, ...(fontconfigFile && { FONTCONFIG_FILE: fontconfigFile }), ...options.env },
  });
}
