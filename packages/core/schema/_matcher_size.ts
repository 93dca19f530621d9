/**
 * How big a matcher's program may get. RE2 writes a counted repetition out
 * copy by copy (`x{1,990}` is 990 copies of `x`), so a pattern of 1,024
 * characters such as `(\pL|\pN|\pP|\pS){1,990}` written forty times compiles
 * to ~158,000 instructions: ~290 ms of host CPU to compile, and tens of
 * megabytes kept. {@linkcode estimateProgram} bounds a pattern's program from
 * its text, in one pass and before anything compiles it, so that such a
 * pattern is refused without being compiled; `matcher.ts` also checks the
 * compiled program against {@linkcode MAX_MATCHER_INSTRUCTIONS}.
 *
 * @module
 */

/**
 * Most instructions a matcher's compiled program may have: ample for the
 * patterns hooks match with (a few dozen to a few hundred), and what RE2
 * compiles in ~5 ms.
 */
export const MAX_MATCHER_INSTRUCTIONS = 4_096;

/**
 * One group being read: its weight so far, the weight of its last atom, and
 * what the group adds to its contents (a capture's two instructions).
 */
interface Frame {
  total: number;
  last: number;
  extra: number;
}

/**
 * An estimate, from above for the usual forms, of the instructions RE2
 * compiles `pattern` to: each character, class or escape weighs 1, a group
 * its contents (a capturing one plus 2), an alternation 1, and a counted repetition `{n,m}`
 * multiplies the weight of what it repeats by n + 2 × (m − n), its optional
 * copies costing a choice each (`{n}`: n; `{n,}`: n + 2). Linear in the
 * pattern's length; the pattern need not be valid.
 */
export function estimateProgram(pattern: string): number {
  const stack: Frame[] = [{ total: 0, last: 0, extra: 0 }];
  const top = () => stack[stack.length - 1]!;
  const atom = (weight: number) => {
    top().total += weight;
    top().last = weight;
  };
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      i = escapeEnd(pattern, i);
      atom(1);
    } else if (ch === "[") {
      i = classEnd(pattern, i);
      atom(1);
    } else if (ch === "(") {
      if (pattern.startsWith("(?", i) && /^\(\?[a-zA-Z-]*\)/.test(pattern.slice(i, i + 16))) {
        i = pattern.indexOf(")", i) + 1; // flags only: no group
        continue;
      }
      // `(?:…)` and `(?i:…)` only group; `(…)`, `(?P<n>…)` and `(?<n>…)` capture.
      const capture = pattern[i + 1] !== "?" || pattern[i + 2] === "P" || pattern[i + 2] === "<";
      stack.push({ total: 0, last: 0, extra: capture ? 2 : 0 });
      // Past the group's header: `(`, `(?:`, `(?i:`, `(?P<name>`, `(?<name>`.
      const header = pattern[i + 1] === "?"
        ? /^\(\?(?:[a-zA-Z-]*:|P?<[^>]*>)/.exec(pattern.slice(i, i + 64))
        : null;
      i += header === null ? 1 : header[0].length;
    } else if (ch === ")") {
      const group = stack.length > 1 ? stack.pop()! : { total: 0, last: 0, extra: 0 };
      atom(group.total + group.extra);
      i++;
    } else if (ch === "|") {
      top().total += 1;
      top().last = 0;
      i++;
    } else if (ch === "*" || ch === "+" || ch === "?") {
      top().total += 1;
      i++;
    } else if (ch === "{") {
      const m = /^\{(\d{1,6})(,(\d{0,6}))?\}/.exec(pattern.slice(i, i + 16));
      if (m === null) {
        atom(1);
        i++;
        continue;
      }
      // x{n,m}: n copies of x, then m - n optional ones (each a copy and a choice).
      const low = Number(m[1]);
      const high = m[2] === undefined ? low : m[3] === "" ? low + 1 : Math.max(low, Number(m[3]));
      const frame = top();
      const copies = Math.max(1, low + 2 * (high - low));
      frame.total += frame.last * (copies - 1) + 1;
      frame.last *= copies;
      i += m[0].length;
    } else {
      atom(1);
      i++;
    }
  }
  // Groups left open (an invalid pattern) count as closed.
  while (stack.length > 1) {
    const group = stack.pop()!;
    atom(group.total + group.extra);
  }
  return top().total;
}

/** The index after the escape starting at `i` (`\pL`, `\p{Greek}`, `\x{41}`, `\Q…\E`, `\d`). */
function escapeEnd(pattern: string, i: number): number {
  const next = pattern[i + 1];
  if ((next === "p" || next === "P" || next === "x") && pattern[i + 2] === "{") {
    const close = pattern.indexOf("}", i + 3);
    return close < 0 ? pattern.length : close + 1;
  }
  if (next === "p" || next === "P") return Math.min(pattern.length, i + 3);
  if (next === "x") return Math.min(pattern.length, i + 4);
  return Math.min(pattern.length, i + 2);
}

/** The index after the class starting at `i` (a `]` first in it is a member; escapes inside). */
function classEnd(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === "^") j++;
  if (pattern[j] === "]") j++;
  while (j < pattern.length) {
    const ch = pattern[j]!;
    if (ch === "\\") j = escapeEnd(pattern, j);
    else if (ch === "[" && pattern[j + 1] === ":") {
      const close = pattern.indexOf(":]", j + 2);
      j = close < 0 ? j + 1 : close + 2;
    } else if (ch === "]") return j + 1;
    else j++;
  }
  return pattern.length;
}
