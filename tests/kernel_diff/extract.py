#!/usr/bin/env python3
"""Extract named kernel definitions from an installed kernel source tarball.

Usage: extract.py TARBALL OUTDIR SPEC
  TARBALL  e.g. /usr/src/linux-source-6.12.tar.xz (Debian's linux-source-X.Y package)
  OUTDIR   where to write <unit>.kextract.c files (build.rs passes a directory of OUT_DIR)
  SPEC     lines "unit  path/in/tree  kind  name" (kind: func | struct | enum | var | define | stmt | file | file-noinc;
           shim: our header shim/NAME included there, path '-'),
           '#' comments allowed

For each unit it writes OUTDIR/<unit>.kextract.c holding, in SPEC order, the text of the
named definitions taken from the tarball: a function (its signature and body, found by
name at the start of a line and brace matching), a struct definition, an initialised variable (a table), a #define (with its
continuation lines) or a whole file (for generated tables such as sched-pelt.h). Only the
files named in SPEC are unpacked (into OUTDIR/tree). Nothing extracted is ever written
inside the repository: the kernel is GPL-2.0, schedlab is MIT/Apache-2.0.

Exit status 3 with a one-line reason on stderr when a definition is not found (the
kernel version changed the code): build.rs turns that into SKIPPED for the unit's tests.
"""
import os
import re
import subprocess
import sys


def unpack(tarball, outdir, paths):
    tree = os.path.join(outdir, "tree")
    os.makedirs(tree, exist_ok=True)
    prefix = subprocess.run(
        ["sh", "-c", f"tar -tf '{tarball}' | head -1"], capture_output=True, text=True, check=True
    ).stdout.strip().split("/")[0]
    missing = [p for p in paths if not os.path.exists(os.path.join(tree, prefix, p))]
    if missing:
        subprocess.run(
            ["tar", "-xf", tarball, "-C", tree] + [f"{prefix}/{p}" for p in missing], check=True
        )
    return os.path.join(tree, prefix)


def strip_comments(text):
    # Blank out comments and string contents (same length) so brace matching is safe.
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text[i] in "\"'":
            q = text[i]
            j = i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def match_brace(clean, open_at):
    depth = 0
    for k in range(open_at, len(clean)):
        if clean[k] == "{":
            depth += 1
        elif clean[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced braces")


def find_func(text, clean, name):
    # The name at a line start (return type on the line before) or after a return type
    # on the same line; the definition is the one followed by a body, not a prototype.
    pat = re.compile(r"^(?:[A-Za-z_][\w \t\*]*[ \t\*])?" + re.escape(name) + r"\s*\(", re.M)
    for m in pat.finditer(clean):
        k = m.end() - 1
        depth = 0
        while k < len(clean):
            if clean[k] == "(":
                depth += 1
            elif clean[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        rest = clean[k + 1 :]
        stripped = rest.lstrip()
        if not stripped.startswith("{"):
            continue
        open_at = k + 1 + (len(rest) - len(stripped))
        end = match_brace(clean, open_at)
        # Include a return type written on the previous line(s).
        start = m.start()
        line_start = text.rfind("\n", 0, start) + 1
        prev = text.rfind("\n", 0, max(line_start - 1, 0)) + 1
        prev_line = clean[prev : line_start - 1]
        if line_start > 0 and re.fullmatch(r"\s*(static|inline|__always_inline|unsigned|int|u64|u32|s64|bool|void|long|struct\s+\w+\s*\*?|[\w\s\*])+\s*", prev_line or "x") and not prev_line.strip().endswith((";", "}", "{")) and prev_line.strip():
            start = prev
        return text[start : end + 1] + "\n"
    raise LookupError(f"function {name}")


def find_struct(text, clean, name, keyword="struct"):
    m = re.search(r"^" + keyword + r"\s+" + re.escape(name) + r"\s*\{", clean, re.M)
    if not m:
        raise LookupError(f"{keyword} {name}")
    end = match_brace(clean, m.end() - 1)
    semi = clean.index(";", end)
    return text[m.start() : semi + 1] + "\n"


def find_var(text, clean, name):
    m = re.search(r"^[\w \t]*\b" + re.escape(name) + r"\s*(\[[^\]]*\])?\s*=\s*\{", clean, re.M)
    if not m:
        raise LookupError(f"variable {name}")
    end = match_brace(clean, m.end() - 1)
    semi = clean.index(";", end)
    return text[m.start() : semi + 1] + "\n"


def find_define(text, clean, name):
    m = re.search(r"^#\s*define\s+" + re.escape(name) + r"\b", clean, re.M)
    if not m:
        raise LookupError(f"#define {name}")
    end = m.start()
    while True:
        nl = text.find("\n", end)
        nl = len(text) if nl < 0 else nl
        if text[end:nl].rstrip().endswith("\\"):
            end = nl + 1
            continue
        return text[m.start() : nl] + "\n"


def main():
    tarball, outdir, spec = sys.argv[1:4]
    entries = []
    with open(spec) as f:
        for line in f:
            line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if line:
                unit, path, kind, name = line.split()
                entries.append((unit, path, kind, name))
    root = unpack(tarball, outdir, sorted({e[1] for e in entries if e[2] != "shim"} | {"Makefile"}))
    # The exact version (Debian's linux-source-6.12 is a 6.12.y stable release).
    with open(os.path.join(root, "Makefile")) as f:
        head = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)", f.read(), re.M))
    with open(os.path.join(outdir, "version.txt"), "w") as f:
        f.write(f"{head.get('VERSION')}.{head.get('PATCHLEVEL')}.{head.get('SUBLEVEL')}")
    units = {}
    cache = {}
    for unit, path, kind, name in entries:
        if kind == "shim":
            # Our own header (shim/NAME), included at this point of the unit.
            units.setdefault(unit, []).append(f'#include "{name}"\n')
            continue
        if path not in cache:
            with open(os.path.join(root, path), errors="replace") as f:
                text = f.read()
            cache[path] = (text, strip_comments(text))
        text, clean = cache[path]
        try:
            if kind == "func":
                body = find_func(text, clean, name)
            elif kind == "struct":
                body = find_struct(text, clean, name)
            elif kind == "enum":
                body = find_struct(text, clean, name, "enum")
            elif kind == "var":
                body = find_var(text, clean, name)
            elif kind == "define":
                body = find_define(text, clean, name)
            elif kind == "file":
                body = text
            elif kind == "file-noinc":
                # A whole file with its #include lines dropped: the shim provides what
                # they would (container_of, rcu_assign_pointer, ...).
                body = re.sub(r"^#\s*include\s*[<\"].*$", "", text, flags=re.M)
            elif kind == "stmt":
                # A top-level statement starting with `name` (a macro invocation such as
                # RB_DECLARE_CALLBACKS(...);), up to its closing parenthesis and `;`.
                m = re.search(r"^" + re.escape(name) + r"\s*\(", clean, re.M)
                if not m:
                    raise LookupError(f"statement {name}")
                semi = clean.index(";", m.end())
                body = text[m.start() : semi + 1] + "\n"
            else:
                raise ValueError(f"unknown kind {kind}")
        except LookupError as e:
            print(f"{os.path.basename(tarball)}: {path}: {e} not found", file=sys.stderr)
            sys.exit(3)
        if kind in ("func", "var") and not body.lstrip().startswith("static"):
            # Internal linkage for every extracted definition: units of two kernel
            # versions (and their copies of non-static functions such as
            # __pick_first_entity) are linked into one test binary.
            body = "static " + body
        units.setdefault(unit, []).append(f"/* {path}: {kind} {name} */\n{body}")
    for unit, parts in units.items():
        with open(os.path.join(outdir, f"{unit}.kextract.c"), "w") as f:
            f.write("\n".join(parts))


if __name__ == "__main__":
    main()
