#!/usr/bin/env python3
"""Every repository path the docs and the code's comments name must exist.

    paths_test.py SOURCE_DIR [FILE...]

Scans README.md and docs/**/*.md (all their text, plus relative Markdown
links, resolved from the page's folder, and their #anchors against the
target's headings as GitHub names them) and the comments of the tracked
source files (C/C++/Verilog `//` and `/* */`, shell/Python/CMake/YAML `#`).
A path is a token that starts with one of the product's top-level folders
(`fib/...`, `tests/...`, ...) and is not part of a longer path (`$root/fib/x`,
`/etc/fibnic/...` are not repo-relative). Trailing punctuation, `:LINE` and
`#anchor` are dropped. A stem names its files (`fibnicd/pipeline`).
Placeholders are explicit: `*`, `?` and `[..]` are globs; `<name>`, `{a,b}`
and a lone `N`/`K` after `-` or `_` stand for "any"; a placeholder path
must match at least one file. With FILE arguments only those files are
scanned (how a planted bad path is checked by hand):

    echo '`fib/no_such.h`' >> docs/fib.md; paths_test.py . docs/fib.md  # FAIL, exit 1
"""
import glob
import os
import re
import subprocess
import sys

TOP = ("common device rib sources fib hwif fibnicd web tools ipnuma emu fpga "
       "lab bench tests scripts configs packaging docs data").split()
TOKEN = re.compile(
    r"(?<![A-Za-z0-9_./$~@:-])((?:%s)/[A-Za-z0-9_.*?<>{}\[\],/+-]*)" % "|".join(TOP))
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_EXT = {".h", ".cc", ".cpp", ".c", ".v", ".sv", ".py", ".sh", ".cmake",
            ".yaml", ".yml", ".js", ".css", ".conf", ".snippet", ".service"}
SLASH_COMMENT = {".h", ".cc", ".cpp", ".c", ".v", ".sv", ".js", ".css"}


def comments(path, text):
    """Yield (line number, comment text) of a source file."""
    ext = os.path.splitext(path)[1]
    if ext in SLASH_COMMENT:
        in_block = False
        for n, line in enumerate(text.splitlines(), 1):
            out = []
            rest = line
            while rest:
                if in_block:
                    end = rest.find("*/")
                    if end < 0:
                        out.append(rest)
                        rest = ""
                    else:
                        out.append(rest[:end])
                        rest = rest[end + 2:]
                        in_block = False
                    continue
                i = rest.find("//")
                j = rest.find("/*")
                if i >= 0 and (j < 0 or i < j):
                    out.append(rest[i + 2:])
                    rest = ""
                elif j >= 0:
                    in_block = True
                    rest = rest[j + 2:]
                else:
                    rest = ""
            if out:
                yield n, " ".join(out)
    else:
        for n, line in enumerate(text.splitlines(), 1):
            m = re.search(r"(?:^|\s)#(?![!{#])(.*)", line)
            if m:
                yield n, m.group(1)


def expand_braces(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(p[:m.start()] + alt + p[m.end():])
    return out


def exists(src, p):
    p = re.sub(r"(:\d+(-\d+)?)$", "", p.split("#")[0])
    p = p.rstrip(".,;:'\"`]")
    if not p:
        return True
    pats = []
    for q in expand_braces(p):
        q = re.sub(r"<[^<>]*>", "*", q)
        q = re.sub(r"(?<=[-_])[NK](?=[./_-]|$)", "*", q)
        pats.append(q)
    for q in pats:
        full = os.path.join(src, q)
        if any(c in q for c in "*?["):
            if glob.glob(full) or glob.glob(full.rstrip("/")):
                return True
        elif os.path.exists(full) or glob.glob(full + ".*"):
            return True  # a file, a folder, or a file's stem (`fib/fib` for fib.h/.cc)
    return False


def anchors(path):
    """The anchors GitHub gives a Markdown file's headings."""
    out, seen, in_code = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            m = None if in_code else re.match(r"#{1,6} +(.*?) *#* *$", line)
            if not m:
                continue
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def scan(src, rel, text, is_doc):
    bad = []
    lines = (enumerate(text.splitlines(), 1) if is_doc else comments(rel, text))
    for n, line in lines:
        for m in TOKEN.finditer(line):
            tok = m.group(1)
            if not exists(src, tok):
                bad.append("%s:%d: %s" % (rel, n, tok.rstrip(".,;:")))
        if is_doc:
            for m in LINK.finditer(line):
                target, _, anchor = m.group(1).partition("#")
                if re.match(r"^[a-z]+:", target):
                    continue
                full = os.path.normpath(os.path.join(src, os.path.dirname(rel), target or
                                                     os.path.basename(rel)))
                if not os.path.exists(full):
                    bad.append("%s:%d: link %s" % (rel, n, m.group(1)))
                elif anchor and full.endswith(".md") and anchor not in anchors(full):
                    bad.append("%s:%d: link %s: no such heading" % (rel, n, m.group(1)))
    return bad


def main():
    src = os.path.abspath(sys.argv[1])
    files = sys.argv[2:]
    if not files:
        try:
            files = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others",
                                    "--exclude-standard"], capture_output=True,
                                   text=True, check=True).stdout.split()
        except (OSError, subprocess.CalledProcessError):
            files = []
        if not files:  # not a git checkout (a source tarball): walk it
            for d, _, names in os.walk(src):
                top = os.path.relpath(d, src).split(os.sep)[0]
                if top.startswith("build") or top.startswith("."):
                    continue
                files += [os.path.relpath(os.path.join(d, f), src) for f in names]
    bad = []
    scanned = 0
    for rel in sorted(files):
        rel = os.path.relpath(os.path.abspath(os.path.join(src, rel)), src) \
            if os.path.isabs(rel) else rel
        is_doc = rel == "README.md" or (rel.startswith("docs/") and rel.endswith(".md"))
        ext = os.path.splitext(rel)[1]
        base = os.path.basename(rel)
        if not is_doc and ext not in CODE_EXT and base != "CMakeLists.txt":
            continue
        if rel.startswith("data/"):
            continue
        try:
            with open(os.path.join(src, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        scanned += 1
        bad += scan(src, rel, text, is_doc)
    for b in bad:
        print("FAIL: no such path: " + b)
    print("%d files scanned, %d dangling paths" % (scanned, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
