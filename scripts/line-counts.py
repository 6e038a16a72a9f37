#!/usr/bin/env python3
"""Non-test lines per crate at a git revision, and the files over 700 lines.

    python3 scripts/line-counts.py [REV]     # default HEAD

A file's non-test lines are those before its `#[cfg(test)] mod tests` (doc comments and blank
lines included), under crates/*/src. Standard library only.
"""

import collections
import subprocess
import sys


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def non_test(text: str) -> int:
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "#[cfg(test)]" and lines[i + 1].strip().startswith("mod tests"):
            return i
    return len(lines)


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    totals: collections.Counter[str] = collections.Counter()
    long_files = []
    for path in git("ls-tree", "-r", "--name-only", rev, "crates").split():
        if not path.endswith(".rs") or "/src/" not in path:
            continue
        text = git("show", f"{rev}:{path}")
        totals[path.split("/")[1]] += non_test(text)
        if text.count("\n") > 700:
            long_files.append((path, text.count("\n"), non_test(text)))
    for crate, n in sorted(totals.items()):
        print(f"{crate:16} {n}")
    print(f"{'total':16} {sum(totals.values())}")
    for path, lines, code in sorted(long_files):
        print(f"over 700 lines: {path} ({lines}, {code} before its tests)")


if __name__ == "__main__":
    main()
