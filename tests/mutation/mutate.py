#!/usr/bin/python3
"""Reads tests/mutation/mutations.txt and applies one mutation (for run.sh).

    mutate.py list                  name<TAB>file<TAB>tests regex, one a line
    mutate.py apply NAME TREE       mutates TREE/<file> in place; exit 3 when
                                    the original line is not there exactly once
"""
import os
import sys

LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mutations.txt")
FIELDS = ("file", "from", "to", "tests", "why")


def load():
    muts, cur = [], None
    with open(LIST, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                cur = {"name": line[1:-1], "line": n}
                muts.append(cur)
                continue
            key, sep, value = line.partition(":")
            if cur is None or not sep or key not in FIELDS:
                sys.exit(f"{LIST}:{n}: expected [name] or one of {FIELDS}")
            cur[key] = value.strip()
    for m in muts:
        missing = [f for f in FIELDS if f not in m]
        if missing:
            sys.exit(f"{LIST}:{m['line']}: [{m['name']}] lacks {missing}")
    names = [m["name"] for m in muts]
    if len(set(names)) != len(names):
        sys.exit(f"{LIST}: duplicate mutation names")
    return muts


def apply(m, tree):
    path = os.path.join(tree, m["file"])
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except OSError as e:
        print(f"{m['name']}: {e}", file=sys.stderr)
        return 3
    hits = [i for i, l in enumerate(lines) if l.strip() == m["from"]]
    if len(hits) != 1:
        print(f"{m['name']}: '{m['from']}' found {len(hits)} times in {m['file']}",
              file=sys.stderr)
        return 3
    i = hits[0]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = indent + m["to"]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    return 0


def main():
    muts = load()
    if sys.argv[1:] == ["list"]:
        for m in muts:
            print(f"{m['name']}\t{m['file']}\t{m['tests']}")
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "apply":
        for m in muts:
            if m["name"] == sys.argv[2]:
                return apply(m, sys.argv[3])
        sys.exit(f"no mutation named {sys.argv[2]}")
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
