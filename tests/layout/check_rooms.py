#!/usr/bin/env python3
"""The layering rules of docs/architecture.md, checked on every source file: a room includes only
rooms below it (never one above it or beside it), and libgit2 is included by one file."""
import pathlib
import re
import sys

# Rooms from the bottom up; rooms on the same step may not include each other.
STEPS = [["common"], ["contract"], ["git"], ["briefs", "sandbox"], ["audit"], ["agents"],
         ["verify"], ["report"], ["dispatcher"], ["examples"], ["mcp"], ["cli"]]
RANK = {room: i for i, step in enumerate(STEPS) for room in step}
LIBGIT2_FILES = {"git/repo.cc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
problems = []
for path in sorted(root.rglob("*")):
    if path.suffix not in (".h", ".cc") or not path.is_file():
        continue
    rel = path.relative_to(root)
    room = rel.parts[0]
    if room not in RANK:
        if len(rel.parts) > 1 and room not in ("tests", "bench") and not room.startswith("build"):
            problems.append(f"{rel}: room {room!r} is not in the layering order (add it here "
                            "and to docs/architecture.md)")
        continue
    for kind, target in INCLUDE.findall(path.read_text(errors="replace")):
        if kind == "<":
            if target == "git2.h" and str(rel) not in LIBGIT2_FILES:
                problems.append(f"{rel}: includes libgit2, which only "
                                f"{', '.join(sorted(LIBGIT2_FILES))} may")
            continue
        other = target.split("/")[0]
        if other not in RANK or other == room:
            continue
        if RANK[other] >= RANK[room]:
            where = "beside" if RANK[other] == RANK[room] else "above"
            problems.append(f"{rel}: includes {target}, from room {other!r} {where} {room!r}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
