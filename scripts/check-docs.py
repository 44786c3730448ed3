#!/usr/bin/env python3
"""Checks the documentation's references: every relative link of README.md and docs/*.md
names a file that exists (relative to the page), and every path written in backquotes
that starts at one of the repository's top folders (crates/, scripts/, docs/, topology/,
.ci/) names a file or folder that exists. Prints each broken reference and fails if any.

    python3 scripts/check-docs.py
"""
import glob
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
link = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")
quoted = re.compile(r"`((?:crates|scripts|docs|topology|\.ci)/[A-Za-z0-9_./*-]+)`")
broken = []
checked = 0
for page in pages:
    rel = os.path.relpath(page, root)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    # Code blocks hold commands and programs, not references.
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in link.finditer(prose):
        target = m.group(1)
        if "://" in target or target.startswith("mailto:"):
            continue
        checked += 1
        if not os.path.exists(os.path.join(os.path.dirname(page), target)):
            broken.append(f"{rel}: link to {target}")
    for m in quoted.finditer(prose):
        path = m.group(1).rstrip(".")
        checked += 1
        if "*" in path:
            if not glob.glob(os.path.join(root, path)):
                broken.append(f"{rel}: `{path}` matches nothing")
        elif not os.path.exists(os.path.join(root, path)):
            broken.append(f"{rel}: `{path}` does not exist")
for b in broken:
    print(b)
print(f"{len(pages)} pages, {checked} references checked, {len(broken)} broken")
sys.exit(1 if broken else 0)
