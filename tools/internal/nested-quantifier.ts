/**
 * The first group of a JavaScript regular expression that repeats while a branch of it is made of
 * nothing but repetitions (`(a+)+`, `(\w+\s?)*`, `(?:x*){2,}`, `(a+|b)*`), or `undefined`. Such a
 * pattern can split a line in exponentially many ways when it almost matches, and JavaScript's
 * matching is synchronous: one `grep` call would block the process for minutes, beyond the reach of
 * a timeout or an abort. A group with a fixed part in every branch (`(\d+\.)+`) splits one way only
 * and passes. A heuristic, not a proof: it finds the common shape, not every slow pattern.
 *
 * @example
 * ```ts
 * findNestedQuantifier("(a+)+$"); // "(a+)+"
 * findNestedQuantifier("(\\d+\\.)+\\d+"); // undefined
 * ```
 */
export function findNestedQuantifier(pattern: string): string | undefined {
  interface Group {
    start: number;
    /** Something inside repeats without bound. */
    repeats: boolean;
    /** The current branch has an atom that matches exactly once. */
    fixed: boolean;
    /** Some finished branch had no such atom. */
    looseBranch: boolean;
  }
  const groups: Group[] = [{ start: 0, repeats: false, fixed: false, looseBranch: false }];
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    const group = groups.at(-1)!;
    if (char === "(") {
      groups.push({ start: i, repeats: false, fixed: false, looseBranch: false });
      // `(?:`, `(?=`, `(?<name>`: the prefix is no atom.
      if (pattern[i + 1] === "?") i = groupPrefixEnd(pattern, i);
      continue;
    }
    if (char === "|") {
      if (!group.fixed) group.looseBranch = true;
      group.fixed = false;
      continue;
    }
    if (char === "^" || char === "$") continue;
    let end = i; // the last index of this atom
    let inner: Group | undefined;
    if (char === ")") {
      if (groups.length === 1) continue;
      inner = groups.pop()!;
      if (!inner.fixed) inner.looseBranch = true;
    } else if (char === "\\") {
      end = i + 1;
      if (pattern[end] === "b" || pattern[end] === "B") {
        i = end;
        continue;
      }
    } else if (char === "[") {
      end = endOfClass(pattern, i);
    }
    const quantifier = quantifierAt(pattern, end + 1);
    const parent = groups.at(-1)!;
    if (inner && quantifier.unbounded && inner.repeats && inner.looseBranch) {
      return pattern.slice(inner.start, end + 1) + quantifier.text;
    }
    if (quantifier.unbounded || inner?.repeats) parent.repeats = true;
    if (quantifier.fixed && !inner?.looseBranch) parent.fixed = true;
    i = end + quantifier.text.length;
    // A lazy or possessive mark after the quantifier.
    if (quantifier.text !== "" && pattern[i + 1] === "?") i++;
  }
  return undefined;
}

/** The quantifier at `at`, if any: its text, whether it repeats without bound, and whether it leaves the atom matching exactly once. */
function quantifierAt(pattern: string, at: number): { text: string; unbounded: boolean; fixed: boolean } {
  const char = pattern[at];
  if (char === "*" || char === "+") return { text: char, unbounded: true, fixed: false };
  if (char === "?") return { text: char, unbounded: false, fixed: false };
  const brace = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
  if (brace) {
    const unbounded = brace[2] !== undefined && (brace[3] === "" || Number(brace[3]) > 1);
    return { text: brace[0], unbounded, fixed: brace[2] === undefined && brace[1] !== "0" };
  }
  return { text: "", unbounded: false, fixed: true };
}

/** The last index of a group's `?:`, `?=`, `?!`, `?<=`, `?<!` or `?<name>` prefix. */
function groupPrefixEnd(pattern: string, open: number): number {
  const named = /^\(\?<[A-Za-z_$][\w$]*>/.exec(pattern.slice(open));
  if (named) return open + named[0].length - 1;
  return open + (pattern[open + 2] === "<" ? 3 : 2);
}

/** The index of the `]` closing the class opened at `start` (a first `]` is a literal). */
function endOfClass(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") i++;
    else if (pattern[i] === "]") return i;
  }
  return pattern.length - 1;
}
