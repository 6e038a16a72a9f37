#!/usr/bin/env python3
"""Non-test lines per crate at a git revision, the files over 700 lines and the functions over 80.

    python3 scripts/line-counts.py [REV]     # default HEAD

Only files under crates/*/src count (not tests/, benches/ or fuzz/).

Lines: a file's non-test lines are those before its `#[cfg(test)] mod tests` (doc comments and
blank lines included). A file that its parent module declares under `#[cfg(test)]` (`mod tests;`
with the tests in `foo/tests.rs`, or a test-only module such as `hooked.rs`), or under
`#[cfg(any(test, feature = "testing"))]` (the scaffolding that ships to tests only), is test
code, and so is every file below it. A file is over 700 lines by its whole length, tests included.

Functions: every `fn NAME` item with a body, in non-test code (not after the file's
`#[cfg(test)] mod tests`, not in a test-only file, and not itself under `#[cfg(test)]`),
measured from the line of `fn` to the line of its closing brace, inclusive (its doc comment and
attributes are not counted; a nested function is counted on its own and inside its parent).
The scan blanks comments, strings and character literals, then matches braces: no parser, but
enough for rustfmt-formatted code. Standard library only.
"""

import collections
import re
import subprocess
import sys

MAX_FILE_LINES = 700
MAX_FN_LINES = 80

TEST_CFG = r'#\[cfg\((?:test|any\(test, feature = "testing"\))\)\]'
TEST_MOD = re.compile(TEST_CFG + r"\s*(?:#\[doc\(hidden\)\]\s*)?(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;")
RAW = re.compile(r'b?r(#*)"')
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def non_test(text: str) -> int:
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "#[cfg(test)]" and lines[i + 1].strip().startswith("mod tests"):
            return i
    return len(lines)


def module_dir(path: str) -> str:
    """The folder a file's child modules live in: `src/` for lib.rs, `src/foo/` for foo.rs."""
    folder, name = path.rsplit("/", 1)
    if name in ("lib.rs", "main.rs", "mod.rs"):
        return folder
    return f"{folder}/{name[:-3]}"


def test_files(texts: dict[str, str]) -> set[str]:
    """Files declared under `#[cfg(test)]` by their parent, and every file below them."""
    roots = set()
    for path, text in texts.items():
        for name in TEST_MOD.findall(text):
            roots.add(f"{module_dir(path)}/{name}")
    return {p for p in texts if any(p == f"{r}.rs" or p.startswith(f"{r}/") for r in roots)}


def blank(text: str) -> str:
    """The text with comments, strings and character literals replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)

    def wipe(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            wipe(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif c in "br" and (m := RAW.match(text, i)) and (i == 0 or not text[i - 1].isalnum()):
            close = '"' + m.group(1)
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            wipe(i, end)
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        elif c == "'":
            # A character literal ('x', '\n', '\u{1F600}'), or else a lifetime or a label.
            if i + 1 < n and text[i + 1] == "\\":
                end = text.find("'", i + 3)
                wipe(i, end + 1)
                i = end + 1
            elif i + 2 < n and text[i + 2] == "'":
                wipe(i, i + 3)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def under_cfg_test(lines: list[str], line: int) -> bool:
    """Whether the attributes just above line `line` (0-based) include `#[cfg(test)]`."""
    k = line - 1
    while k >= 0 and lines[k].strip().startswith(("#[", "///", "//")):
        if re.fullmatch(TEST_CFG, lines[k].strip()):
            return True
        k -= 1
    return False


def long_functions(text: str) -> list[tuple[int, str, int]]:
    """(line, name, length) of every non-test function with a body longer than MAX_FN_LINES."""
    code = blank(text)
    lines = text.split("\n")
    limit = sum(len(line) + 1 for line in lines[: non_test(text)])
    found = []
    for m in FN.finditer(code, 0, limit):
        j, depth = m.end(), 0
        while j < len(code):
            c = code[j]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and c in "{;":
                break
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        braces, k = 0, j
        while k < len(code):
            braces += {"{": 1, "}": -1}.get(code[k], 0)
            if braces == 0:
                break
            k += 1
        first, last = code.count("\n", 0, m.start()), code.count("\n", 0, k)
        if last - first + 1 > MAX_FN_LINES and not under_cfg_test(lines, first):
            found.append((first + 1, m.group(1), last - first + 1))
    return found


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    paths = [
        p for p in git("ls-tree", "-r", "--name-only", rev, "crates").split() if p.endswith(".rs") and "/src/" in p
    ]
    texts = {p: git("show", f"{rev}:{p}") for p in paths}
    tests = test_files(texts)
    totals: collections.Counter[str] = collections.Counter()
    long_files, long_fns = [], []
    for path, text in texts.items():
        if path not in tests:
            totals[path.split("/")[1]] += non_test(text)
            long_fns += [(path, *f) for f in long_functions(text)]
        if text.count("\n") > MAX_FILE_LINES:
            long_files.append((path, text.count("\n"), non_test(text)))
    for crate, n in sorted(totals.items()):
        print(f"{crate:16} {n}")
    print(f"{'total':16} {sum(totals.values())}")
    for path, lines, code in sorted(long_files):
        print(f"over {MAX_FILE_LINES} lines: {path} ({lines}, {code} before its tests)")
    for path, line, name, length in sorted(long_fns):
        print(f"over {MAX_FN_LINES} lines: {path}:{line} fn {name} ({length})")


if __name__ == "__main__":
    main()
