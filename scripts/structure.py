#!/usr/bin/env python3
"""The structure report of issue 28: types with many stored properties, long functions, and
types extended over many files, in Swift sources.

usage: scripts/structure.py [--props N] [--lines N] [--files N] [DIR ...]
       (defaults: 20, 60, 2; Sources)

It reads Swift roughly, as a newcomer does: comments and string literals are blanked, braces
matched. A stored property is a `var` or `let` directly in a type's body, not `static`, whose
declaration has no body of its own (a `{ get }` or computed body) or only an observer
(`didSet`/`willSet`). A function's length counts the lines from its declaration to its closing
brace. Exit status 1 when anything is over a limit, so that it can guard a change.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

TYPE_RE = re.compile(r"(?:^|\n)\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|"
                     r"fileprivate|package|final|indirect|nonisolated)\s+)*"
                     r"(struct|class|enum|actor|extension|protocol)\s+([A-Za-z_][\w.]*)")
FUNC_RE = re.compile(r"\b(func\s+[^\s(<]+|init[?!]?\s*[(<]|deinit\b|subscript\s*[(<])")
PROP_RE = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|"
                     r"package|nonisolated|final|lazy|weak|unowned|override|private\(set\)|"
                     r"fileprivate\(set\)|internal\(set\)|public\(set\))\s+)*(var|let)\s+"
                     r"([A-Za-z_]\w*)")


def blank(text):
    """Comments and string literals replaced by spaces, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i
            i += hashes
            triple = text.startswith('"""', i)
            quote = '"""' if triple else '"'
            i += len(quote)
            close = quote + "#" * hashes
            while i < n and not text.startswith(close, i):
                if text[i] == "\\" and hashes == 0:
                    if text.startswith("\\(", i):
                        depth, i = 1, i + 2
                        while i < n and depth:
                            depth += {"(": 1, ")": -1}.get(text[i], 0)
                            i += 1
                        continue
                    i += 2
                    continue
                i += 1
            i += len(close)
            out.append(re.sub(r"[^\n]", "x", text[start:i]))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan(path, types, functions):
    text = blank(open(path, encoding="utf-8").read())
    lines = text.split("\n")
    line_of = []
    for number, line in enumerate(lines, 1):
        line_of.extend([number] * (len(line) + 1))
    # A stack of open scopes: (kind, name, start line); kind is "type", "func", "prop" (a
    # property's accessor or observer body) or "block".
    stack = []
    i, n = 0, len(text)
    statement_start = 0
    while i < n:
        c = text[i]
        if c == "{":
            header = text[statement_start:i]
            scope = ("block", None, line_of[i])
            type_match = TYPE_RE.search(header)
            func_match = FUNC_RE.search(header)
            in_type = bool(stack) and stack[-1][0] == "type"
            if type_match and (not func_match or type_match.start() < func_match.start()):
                name = type_match.group(2)
                if type_match.group(1) != "extension" and stack:
                    outer = [s[1] for s in stack if s[0] == "type"]
                    name = ".".join(outer + [name]) if outer else name
                name = re.sub(r"<.*", "", name)
                scope = ("type", name, line_of[i])
                types[name]["files"].add(path)
                if type_match.group(1) != "extension":
                    types[name]["kind"] = type_match.group(1)
            elif func_match:
                owner = next((s[1] for s in reversed(stack) if s[0] == "type"), "")
                label = func_match.group(0).strip().rstrip("(<")
                first_line = line_of[statement_start + len(header) - len(header.lstrip())]
                scope = ("func", f"{owner}.{label}" if owner else label, first_line)
            elif in_type:
                full = header.strip()
                prop = PROP_RE.match(full)
                if prop and not re.search(r"\bstatic\b|\bclass\s+var\b", full):
                    body_start = i
                    depth, j = 1, i + 1
                    while j < n and depth:
                        depth += {"{": 1, "}": -1}.get(text[j], 0)
                        j += 1
                    body = text[body_start + 1:j - 1].strip()
                    if re.match(r"(didSet|willSet)\b", body):
                        types[stack[-1][1]]["props"].append(prop.group(2))
                    scope = ("prop", None, line_of[i])
            stack.append(scope)
            statement_start = i + 1
        elif c == "}":
            if stack:
                kind, name, start = stack.pop()
                if kind == "func":
                    functions.append((line_of[i] - start + 1, name, path, start))
            statement_start = i + 1
        elif c in ";\n":
            # A statement ends at a newline unless the next line continues it (an operator,
            # a dot, an open parenthesis): good enough for declarations, which is all it reads.
            if c == ";" or not _continues(text, i):
                if stack and stack[-1][0] == "type":
                    decl = text[statement_start:i].strip()
                    prop = PROP_RE.match(decl)
                    if prop and not re.search(r"\bstatic\b", decl) and "{" not in decl:
                        types[stack[-1][1]]["props"].append(prop.group(2))
                statement_start = i + 1
        i += 1


def _continues(text, i):
    before = text[:i].rstrip()
    after = text[i + 1:].lstrip()
    if not before:
        return False
    if before[-1] in "=,([:&|+-*/<>?" or before.endswith("->"):
        return True
    if re.match(r"(throws|rethrows|async|where)\b|\{", after):
        return True
    if after[:1] in ".)]" or after.startswith("->") or after[:2] in ("&&", "||", "? ", ": ", "?? "):
        return True
    depth = 0
    for ch in text[text.rfind("\n", 0, i - 1) + 1:i]:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
    return depth > 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--props", type=int, default=20)
    parser.add_argument("--lines", type=int, default=60)
    parser.add_argument("--files", type=int, default=2)
    parser.add_argument("dirs", nargs="*", default=["Sources"])
    args = parser.parse_args()
    types = defaultdict(lambda: {"props": [], "files": set(), "kind": "extension"})
    functions = []
    for top in args.dirs:
        for root, _, names in os.walk(top):
            for name in sorted(names):
                if name.endswith(".swift"):
                    scan(os.path.join(root, name), types, functions)
    over = 0
    for name, info in sorted(types.items()):
        if len(info["props"]) > args.props:
            over += 1
            print(f"props {len(info['props']):3d}  {info['kind']} {name}")
        files = sorted(os.path.basename(f) for f in info["files"])
        if len(files) > args.files:
            over += 1
            print(f"files {len(files):3d}  {name}: {', '.join(files)}")
    for length, name, path, start in sorted(functions, reverse=True):
        if length > args.lines:
            over += 1
            print(f"lines {length:3d}  {name}  {path}:{start}")
    print(f"# {len(types)} types, {len(functions)} functions; {over} over a limit "
          f"(props > {args.props}, lines > {args.lines}, files > {args.files})")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
