// The one line diff of agent-machine: the page's approval cards and the command's approval questions
// and applied edits (cli/file-changes.ts loads this file) draw the same rows from it. Plain data, no
// DOM, no dependencies: the browser loads it as it is.

/** Past this many cells (middle lines before × after) the table would cost too much: removed, then added. */
const MAX_CELLS = 1_000_000;

/**
 * A text's lines, each with the key it is compared by: the last line of a text that does not end
 * with a newline differs from the same line with one (as `diff -u` tells them apart).
 */
function linesOf(text) {
  if (text === "") return { texts: [], keys: [] };
  const texts = text.split("\n");
  const keys = texts.slice();
  if (texts.at(-1) === "") {
    texts.pop();
    keys.pop();
  } else keys[keys.length - 1] += "\n\\ No newline at end of file";
  return { texts, keys };
}

/** The rows of the middle part (what differs) by longest common subsequence. */
function middleRows(a, b, from, aEnd, bEnd) {
  const m = aEnd - from;
  const n = bEnd - from;
  const rows = [];
  if (m * n > MAX_CELLS) {
    for (let i = from; i < aEnd; i++) rows.push({ sign: "-", text: a.texts[i] });
    for (let j = from; j < bEnd; j++) rows.push({ sign: "+", text: b.texts[j] });
    return rows;
  }
  const lcs = Array.from({ length: m + 1 }, () => new Uint32Array(n + 1));
  for (let i = m - 1; i >= 0; i--)
    for (let j = n - 1; j >= 0; j--)
      lcs[i][j] =
        a.keys[from + i] === b.keys[from + j]
          ? lcs[i + 1][j + 1] + 1
          : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0;
  let j = 0;
  while (i < m || j < n) {
    if (i < m && j < n && a.keys[from + i] === b.keys[from + j]) {
      rows.push({ sign: " ", text: a.texts[from + i] });
      i++;
      j++;
    } else if (i < m && (j === n || lcs[i + 1][j] >= lcs[i][j + 1])) {
      // Removed lines before added ones, as `diff -u` writes them.
      rows.push({ sign: "-", text: a.texts[from + i++] });
    } else rows.push({ sign: "+", text: b.texts[from + j++] });
  }
  return rows;
}

/**
 * A line diff of `before` → `after`, every line: rows of `{ sign: " " | "-" | "+", text }`. The
 * common start and end are matched first, so an edit in a large file costs only its changed part.
 *
 * @example
 * diffRows("a\nb\n", "a\nc\n"); // [{ sign: " ", text: "a" }, { sign: "-", text: "b" }, { sign: "+", text: "c" }]
 */
export function diffRows(before, after) {
  const a = linesOf(before);
  const b = linesOf(after);
  let start = 0;
  while (start < a.keys.length && start < b.keys.length && a.keys[start] === b.keys[start]) start++;
  let aEnd = a.keys.length;
  let bEnd = b.keys.length;
  while (aEnd > start && bEnd > start && a.keys[aEnd - 1] === b.keys[bEnd - 1]) {
    aEnd--;
    bEnd--;
  }
  const same = (from, to) => a.texts.slice(from, to).map((text) => ({ sign: " ", text }));
  return [...same(0, start), ...middleRows(a, b, start, aEnd, bEnd), ...same(aEnd, a.keys.length)];
}

/**
 * The hunks of a unified diff of `before` → `after`: the changed rows with `context` unchanged
 * lines around them (3, as `diff -u`), hunks closer than twice that merged. Starts count from 1;
 * `oldLines`/`newLines` are the hunk's lengths on each side (0 for a side that is empty).
 *
 * @example
 * diffHunks("a\nb\nc\n", "a\nB\nc\n");
 * // [{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, rows: (the rows " a", "-b", "+B", " c") }]
 */
export function diffHunks(before, after, context = 3) {
  const rows = diffRows(before, after);
  const ranges = [];
  for (let i = 0; i < rows.length; i++) {
    if (rows[i].sign === " ") continue;
    const from = Math.max(0, i - context);
    const to = Math.min(rows.length, i + context + 1);
    const last = ranges.at(-1);
    if (last && from <= last.to) last.to = Math.max(last.to, to);
    else ranges.push({ from, to });
  }
  const hunks = [];
  let row = 0;
  let oldLine = 1;
  let newLine = 1;
  for (const { from, to } of ranges) {
    for (; row < from; row++) {
      if (rows[row].sign !== "+") oldLine++;
      if (rows[row].sign !== "-") newLine++;
    }
    const hunk = {
      oldStart: oldLine,
      oldLines: 0,
      newStart: newLine,
      newLines: 0,
      rows: rows.slice(from, to),
    };
    for (const r of hunk.rows) {
      if (r.sign !== "+") hunk.oldLines++;
      if (r.sign !== "-") hunk.newLines++;
    }
    hunks.push(hunk);
    oldLine += hunk.oldLines;
    newLine += hunk.newLines;
    row = to;
  }
  return hunks;
}
