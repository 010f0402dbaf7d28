/**
 * Collects a byte stream of any size in bounded memory: the first `headBytes` are kept, and a ring of
 * the last `tailBytes`. Everything between is counted and dropped, so a command that prints 100 MB
 * costs no more than the two windows.
 */
export interface HeadTailBuffer {
  push(chunk: Buffer): void;
  /** Total bytes seen. */
  readonly totalBytes: number;
  /** The kept text, with a `[... N lines truncated ...]` marker where bytes were dropped. */
  render(): string;
  /** Whether anything was dropped. */
  readonly truncated: boolean;
}

const NEWLINE = 0x0a;

function countNewlines(buffer: Buffer, start = 0, end = buffer.length): number {
  let count = 0;
  let index = buffer.indexOf(NEWLINE, start);
  while (index !== -1 && index < end) {
    count++;
    index = buffer.indexOf(NEWLINE, index + 1);
  }
  return count;
}

/**
 * Creates a {@link HeadTailBuffer}.
 *
 * @example
 * ```ts
 * const out = createHeadTailBuffer({ headBytes: 15_000, tailBytes: 15_000 });
 * child.stdout.on("data", (chunk) => out.push(chunk));
 * child.on("close", () => console.log(out.render()));
 * ```
 */
export function createHeadTailBuffer(options: { headBytes: number; tailBytes: number }): HeadTailBuffer {
  const { headBytes, tailBytes } = options;
  const head: Buffer[] = [];
  let headSize = 0;
  let tail: Buffer[] = [];
  let tailSize = 0;
  let totalBytes = 0;
  let totalNewlines = 0;

  const compactTail = () => {
    // Drop whole chunks from the front while the rest still covers the window.
    while (tail.length > 1 && tailSize - tail[0]!.length >= tailBytes) {
      tailSize -= tail[0]!.length;
      tail.shift();
    }
    if (tail.length > 64) {
      const joined = Buffer.concat(tail);
      tail = [joined.subarray(Math.max(0, joined.length - tailBytes))];
      tailSize = tail[0]!.length;
    }
  };

  return {
    push(chunk: Buffer) {
      totalBytes += chunk.length;
      totalNewlines += countNewlines(chunk);
      if (headSize < headBytes) {
        const take = Math.min(headBytes - headSize, chunk.length);
        head.push(chunk.subarray(0, take));
        headSize += take;
        chunk = chunk.subarray(take);
      }
      if (chunk.length === 0) return;
      // Copy: the stream may reuse its buffers, and a small slice must not pin a big one.
      tail.push(Buffer.from(chunk));
      tailSize += chunk.length;
      compactTail();
    },
    get totalBytes() {
      return totalBytes;
    },
    get truncated() {
      return totalBytes > headBytes + tailBytes;
    },
    render() {
      const headBuffer = Buffer.concat(head);
      const tailJoined = Buffer.concat(tail);
      if (totalBytes <= headBytes + tailBytes) {
        return Buffer.concat([headBuffer, tailJoined]).toString("utf8");
      }
      let tailBuffer = tailJoined.subarray(Math.max(0, tailJoined.length - tailBytes));
      // Cut both windows at line boundaries so no half line (or half UTF-8 character) is shown.
      let headEnd = headBuffer.lastIndexOf(NEWLINE);
      headEnd = headEnd === -1 ? headBuffer.length : headEnd + 1;
      const firstTailNewline = tailBuffer.indexOf(NEWLINE);
      if (firstTailNewline !== -1 && firstTailNewline < tailBuffer.length - 1) {
        tailBuffer = tailBuffer.subarray(firstTailNewline + 1);
      }
      const shownHead = headBuffer.subarray(0, headEnd);
      const droppedBytes = totalBytes - shownHead.length - tailBuffer.length;
      const shownNewlines = countNewlines(shownHead) + countNewlines(tailBuffer);
      const droppedLines = Math.max(1, totalNewlines - shownNewlines);
      return `${shownHead.toString("utf8")}\n[... ${droppedLines} lines truncated (${droppedBytes} bytes) ...]\n\n${tailBuffer.toString("utf8")}`;
    },
  };
}
