#!/usr/bin/env python3
"""Moves Java classes to other packages and fixes the references to them, in a whole source tree.

    tools/repackage.py MAPPING... [--move] [ROOT]

Each MAPPING (a file ending in .map; tools/repackage/ holds the moves made so far) has one line per class: "old.package.Class new.package" ('#' starts a comment).
ROOT (default: the current directory) holds src/main/java and src/test/java.

With --move, each class's file (and, in src/test/java, its test files named ClassTest*.java or listed in the
mapping themselves) is moved with `git mv` and its package line rewritten. Without it, only the references are
fixed: that is what another branch that still names the old packages needs after the move is merged.

References fixed:
  - every "old.package.Class" (imports, static imports, fully qualified names in code and javadoc) is renamed;
  - a file that could name Class without an import (it lived, or still lives, in the old package) and now sits in
    another package gets "import new.package.Class;" when its code, or a {@link Class...} of its javadoc, names it.
Idempotent: a second run changes nothing.
"""
import os
import re
import subprocess
import sys


def read_mapping(paths):
    moves = {}
    for line in (l for path in paths for l in open(path, encoding="utf-8")):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fqn, new_pkg = line.split()
        old_pkg, name = fqn.rsplit(".", 1)
        moves[name] = (old_pkg, new_pkg)
    return moves


def code_and_links(text):
    """The text with comments and string literals blanked, plus the class names of the javadoc's {@link ...}s."""
    out, links, i, n = [], set(), 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for m in re.finditer(r"\{@(?:link|linkplain|value)\s+([A-Z]\w*)", text[i:j]):
                links.add(m.group(1))
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append('""')
            i = j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), links


def java_files(root):
    for base in ("src/main/java", "src/test/java"):
        for d, _, files in os.walk(os.path.join(root, base)):
            for f in files:
                if f.endswith(".java"):
                    yield os.path.join(d, f)


def package_of(text):
    m = re.search(r"^package\s+([\w.]+)\s*;", text, re.M)
    return m.group(1) if m else ""


def move_files(root, moves, mapping_names):
    moved = {}  # new path -> old package
    for base in ("src/main/java", "src/test/java"):
        for name, (old_pkg, new_pkg) in moves.items():
            old_dir = os.path.join(root, base, *old_pkg.split("."))
            new_dir = os.path.join(root, base, *new_pkg.split("."))
            if not os.path.isdir(old_dir):
                continue
            for f in sorted(os.listdir(old_dir)):
                stem = f[:-5] if f.endswith(".java") else None
                if stem is None:
                    continue
                own = stem == name or (base == "src/test/java" and re.fullmatch(name + r"Test\w*", stem)
                                       and stem not in mapping_names)
                if not own:
                    continue
                os.makedirs(new_dir, exist_ok=True)
                src, dst = os.path.join(old_dir, f), os.path.join(new_dir, f)
                subprocess.run(["git", "mv", src, dst], check=True, cwd=root)
                text = open(dst, encoding="utf-8").read()
                text = re.sub(r"^package\s+" + re.escape(old_pkg) + r"\s*;", "package " + new_pkg + ";", text,
                              count=1, flags=re.M)
                open(dst, "w", encoding="utf-8").write(text)
                moved[os.path.abspath(dst)] = old_pkg
    return moved


def fix_references(root, moves, moved):
    changed = 0
    for path in java_files(root):
        text = open(path, encoding="utf-8").read()
        orig = text
        pkg = package_of(text)
        for name, (old_pkg, new_pkg) in moves.items():
            text = re.sub(r"\b" + re.escape(old_pkg) + r"\." + name + r"\b", new_pkg + "." + name, text)
        code, links = code_and_links(text)
        was_in = {pkg, moved.get(os.path.abspath(path), pkg)}
        stem = os.path.basename(path)[:-5]
        for name, (old_pkg, new_pkg) in moves.items():
            if pkg == new_pkg and (stem == name or re.fullmatch(name + r"Test\w*", stem)):
                was_in.add(old_pkg)  # moved here by a merge: it named its old neighbours without imports
        # a file of the old package (still there or moved away) named these classes without an import
        needed = []
        for name, (old_pkg, new_pkg) in moves.items():
            if old_pkg not in was_in or new_pkg == pkg:
                continue
            if path.endswith(os.sep + name + ".java") and pkg == new_pkg:
                continue
            if re.search(r"^import\s+(static\s+)?[\w.]+\." + name + r"\s*;", text, re.M):
                continue
            if re.search(r"^import\s+" + re.escape(new_pkg) + r"\.\*\s*;", text, re.M):
                continue
            # the class is declared in this file (a nested type of the same name) or named through a qualifier
            if re.search(r"(?<![\w.])" + name + r"\b", code) or name in links:
                needed.append(new_pkg + "." + name)
        if needed:
            block = "".join("import " + n + ";\n" for n in sorted(needed))
            m = list(re.finditer(r"^import\s+(?!static)[\w.]+(\.\*)?\s*;\n", text, re.M))
            if m:
                at = m[0].start()
            else:
                pm = re.search(r"^package\s+[\w.]+\s*;\n", text, re.M)
                at = pm.end()
                block = "\n" + block
            text = text[:at] + block + text[at:]
            text = sort_imports(text)
        if text != orig:
            open(path, "w", encoding="utf-8").write(text)
            changed += 1
    return changed


def sort_imports(text):
    """Sorts the first run of plain (non-static) import lines, leaving everything else where it is."""
    lines = text.split("\n")
    idx = [i for i, l in enumerate(lines) if re.match(r"import\s+(?!static)[\w.]+(\.\*)?\s*;$", l)]
    if not idx:
        return text
    run = [idx[0]]
    for i in idx[1:]:
        if i == run[-1] + 1:
            run.append(i)
        else:
            break
    block = sorted(set(lines[i] for i in run))
    return "\n".join(lines[:run[0]] + block + lines[run[-1] + 1:])


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    moves = read_mapping([a for a in args if a.endswith(".map")])
    roots = [a for a in args if not a.endswith(".map")]
    root = os.path.abspath(roots[0] if roots else ".")
    moved = move_files(root, moves, set(moves)) if "--move" in argv else {}
    print("moved", len(moved), "files; changed", fix_references(root, moves, moved), "files")


if __name__ == "__main__":
    main(sys.argv[1:])
