#!/usr/bin/env python3
"""doc_examples.py: runs every fenced ```sql example of the given Markdown files
in psql (PGHOST etc. from the environment) and compares its output with the
```text block that follows it, by the convention of docs/TESTING.md.  Prints one
TAP line per example.

    doc_examples.py [--list] [--only LINES] [--scratch DIR] FILE.md...

--scratch DIR: "/srv/kbench/" in an example names DIR (the files examples read);
psql runs there (relative paths are DIR's).
--only N[,N]: only the examples that start on these lines (while editing a page).
--list: print the examples found (file:line, fence, has output) and run nothing.
"""
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^(`{3,})\s*([A-Za-z0-9_-]*)\s*(.*)$")

# placeholders an expected output may use, and what each stands for
PLACEHOLDERS = {
    "<id>": r"\d+",
    "<n>": r"-?\d+",
    "<num>": r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?",
    "<ns>": r"\d+",
    "<ms>": r"-?\d+(?:\.\d+)?",
    "<digest>": r"(?:sha256:)?[0-9a-f]{12,64}…?",
    "<ts>": r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:[-+]\d\d(?::\d\d)?|Z)?",
    "<duration>": r"[-0-9:. a-z]+?",
    "<text>": r".*?",
}
PH = re.compile("|".join(re.escape(k) for k in PLACEHOLDERS))


def examples(path):
    """Yield (line, info words, sql text, expected text or None)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []  # (start line, lang, words, body)
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, lang, rest = m.group(1), m.group(2).lower(), m.group(3).split()
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(ticks):
            body.append(lines[i])
            i += 1
        blocks.append((start + 1, lang, rest, "\n".join(body), i))
        i += 1
    for k, (line, lang, words, body, end) in enumerate(blocks):
        if lang != "sql":
            continue
        expected = None
        if k + 1 < len(blocks):
            nline, nlang, _, nbody, _ = blocks[k + 1]
            between = lines[end + 1:nline - 1]
            if nlang in ("text", "psql") and all(not l.strip() for l in between):
                expected = nbody
        yield line, words, body, expected


def norm(line):
    line = line.strip()
    if re.fullmatch(r"[-+]+", line):
        return "-+-" if "+" in line else "-"
    return re.sub(r"\s+", " ", line)


def line_regex(exp):
    out, pos = [], 0
    for m in PH.finditer(exp):
        out.append(re.escape(exp[pos:m.start()]))
        out.append(PLACEHOLDERS[m.group(0)])
        pos = m.end()
    out.append(re.escape(exp[pos:]))
    return re.compile("".join(out))


def matches(got, exp):
    """got, exp: lists of normalized lines; an expected line '...' stands for any lines."""
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if j == len(exp):
            r = i == len(got)
        elif exp[j] == "...":
            r = any(m(k, j + 1) for k in range(i, len(got) + 1))
        else:
            r = i < len(got) and line_regex(exp[j]).fullmatch(got[i]) is not None and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return m(0, 0)


def main():
    args = sys.argv[1:]
    scratch, listing, only = None, False, None
    while args and args[0].startswith("--"):
        if args[0] == "--scratch":
            scratch = args[1]
            args = args[2:]
        elif args[0] == "--only":
            only = {int(x) for x in args[1].split(",")}
            args = args[2:]
        elif args[0] == "--list":
            listing = True
            args = args[1:]
        else:
            sys.exit("doc_examples.py: unknown option " + args[0])
    failed = 0
    for path in args:
        for line, words, sql, expected in examples(path):
            where = "%s:%d" % (path, line)
            if only is not None and line not in only:
                continue
            if listing:
                print(where, " ".join(["sql"] + words), "output" if expected is not None else "-")
                continue
            if "gpu" in words:
                print("ok - %s # SKIP needs=nvidia-smi a GPU example" % where)
                continue
            if scratch:
                sql = sql.replace("/srv/kbench/", scratch.rstrip("/") + "/")
            try:
                p = subprocess.run(["stdbuf", "-o0", "-e0", "psql", "-X", "-q", "-v", "ON_ERROR_STOP=" + os.environ.get("DOCS_STOP", "1"),
                                    "-P", "pager=off"], input=sql, cwd=scratch, text=True, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=600)
                out, rc = p.stdout, p.returncode
            except subprocess.TimeoutExpired as e:
                out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
            got = [norm(l) for l in out.split("\n") if l.strip()]
            got = [re.sub(r"^psql:<stdin>:\d+: ", "", l) for l in got]
            if expected is None:
                # an example with no output shown must run and show something:
                # a view or function that silently returns nothing is a failure
                ok = rc == 0 and not any(l.startswith("ERROR:") or l == "(0 rows)" for l in got)
                why = "runs without an error or an empty result"
            else:
                exp = [norm(l) for l in expected.split("\n") if l.strip()]
                ok = matches(got, exp) and (rc == 0 or any(l.startswith("ERROR:") for l in exp))
                why = "gives the output shown"
            if ok:
                print("ok - %s %s" % (where, why))
            else:
                failed += 1
                print("not ok - %s %s (exit %s)" % (where, why, rc))
                for l in out.rstrip("\n").split("\n")[-40:]:
                    print("#   " + l)
                if expected is not None:
                    print("# expected:")
                    for l in expected.split("\n"):
                        print("#   " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main())
