#!/usr/bin/env python3
"""The import graph of each crate's sources, file by file (`crate::` and `super::` paths,
test modules aside): no two files may import each other through any chain (a circle),
except the ones DESIGN.md defends, listed in ALLOWED; and doca-capi's layers import
downward only (common, then v22, then v1 and v3 side by side, then v15).

Usage: python3 scripts/check-layers.py [-v]   (prints each crate's files and arrows)
"""
import os
import re
import sys

# Circles DESIGN.md defends (crate, the files in it).
ALLOWED = {
    ("doca-core", ("memory/buf", "memory/export", "memory/io", "memory/mmap", "memory/net", "memory/pool")),
}
# doca-capi's layers, lowest first; names in one layer may not import each other.
CAPI_LAYERS = [["common"], ["v22"], ["v1", "v3"], ["v15"], ["task_type_example"]]


def graph(root):
    files = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                parts = os.path.relpath(p, root)[:-3].split("/")
                if parts[-1] == "mod" or (len(parts) == 1 and parts[-1] in ("lib", "main")):
                    parts = parts[:-1]
                files[tuple(parts)] = p

    def expand_use(body):
        out = []

        def rec(prefix, s):
            depth, cur, items = 0, "", []
            for ch in s.strip():
                if ch == "{":
                    depth += 1
                if ch == "}":
                    depth -= 1
                if ch == "," and depth == 0:
                    items.append(cur)
                    cur = ""
                else:
                    cur += ch
            items.append(cur)
            for it in items:
                it = it.strip()
                if not it:
                    continue
                m = re.match(r"^([\w:]*?)::\{(.*)\}$", it, re.S)
                if m:
                    rec(prefix + m.group(1).split("::"), m.group(2))
                else:
                    out.append(prefix + re.sub(r"\s+as\s+\w+$", "", it).split("::"))

        rec([], body)
        return out

    def resolve(mod, path):
        if path[0] == "crate":
            base, rest = [], path[1:]
        elif path[0] == "super":
            base, rest = list(mod), path
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif path[0] == "self":
            base, rest = list(mod), path[1:]
        else:
            return None
        best, cur = (tuple(base) if tuple(base) in files else None), list(base)
        for r in rest:
            cur.append(r)
            if tuple(cur) in files:
                best = tuple(cur)
            else:
                break
        return best

    edges = {k: set() for k in files}
    for mod, p in files.items():
        s = re.sub(r"//[^\n]*", "", open(p).read())
        k = s.find("#[cfg(test)]\nmod tests")
        if k >= 0:
            s = s[:k]
        paths = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", s, re.S):
            paths += expand_use(m.group(1))
        for m in re.finditer(r"(?<!\$)\b((?:crate|super)(?:::\w+)+)", s):
            paths.append(m.group(1).split("::"))
        for path in paths:
            t = resolve(mod, path)
            if t is not None and t != mod and not (len(t) < len(mod) and mod[: len(t)] == t):
                edges[mod].add(t)
    return edges


def circles(edges):
    idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def sc(v):
        idx[v] = low[v] = c[0]
        c[0] += 1
        st.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in idx:
                sc(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(tuple(sorted("/".join(x) for x in comp)))

    for v in edges:
        if v not in idx:
            sc(v)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    crates = os.path.join(here, "..", "crates")
    bad = 0
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        if not os.path.isdir(src):
            continue
        edges = graph(src)
        arrows = sum(len(e) for e in edges.values())
        found = circles(edges)
        for comp in found:
            ok = (crate, comp) in ALLOWED
            print(f"{crate}: circle of {len(comp)}{' (defended in DESIGN.md)' if ok else ''}: {' '.join(comp)}")
            bad += not ok
        if crate == "doca-capi":
            rank = {n: i for i, layer in enumerate(CAPI_LAYERS) for n in layer}
            for k, es in edges.items():
                for t in es:
                    a, b = rank.get(k[0] if k else ""), rank.get(t[0] if t else "")
                    if a is None or b is None:
                        continue
                    if b > a or (b == a and k[0] != t[0]):
                        print(f"doca-capi: {'/'.join(k)} imports {'/'.join(t)}, a layer above or beside it")
                        bad += 1
        if "-v" in sys.argv:
            print(f"{crate}: {len(edges)} files, {arrows} arrows, {len(found)} circles")
            for k in sorted(edges):
                print("  ", "/".join(k) or "(root)", "->", " ".join(sorted("/".join(x) for x in edges[k])))
    if bad:
        print(f"{bad} import circles or upward arrows")
        sys.exit(1)
    print("no import circles (but the defended ones); doca-capi imports downward only")


main()
