#!/usr/bin/env python3
"""test/mutate_gen.py: generated mutations for test/mutate.sh --generate and --quick.

Each mutation is a single-line change of one source file (C of core/, kernels/, src/; the SQL of
sql/code; the python harness kernels/python), made mechanically by one operator:

    cmp      a comparison operator flipped (< <=, > >=, == !=, SQL = <>)
    bool     && and ||, SQL AND and OR, python and and or swapped
    const    an integer constant off by one (n+1; n-1 too where n > 1)
    cond     a condition dropped: C/python `if (X)` -> always true; SQL `WHERE X` -> `WHERE true OR X`,
             `IF X THEN` -> `IF true OR X THEN`
    minmax   min/max (Min/Max, fmin/fmax, least/greatest) swapped
    order    ASC and DESC swapped
    escape   an escape removed: a call of a function named *escape*, *quote*, markdown_cell
             dropped around its argument; format()'s %I / %L turned into %s

String literals and comments are masked first (no operator fires inside them), as are C
preprocessor lines and python docstrings.  Each mutation has an id stable under edits elsewhere in
the file: FILE:HASH:OP:K, where HASH is the first 10 hex digits of the SHA-1 of the original line
with its surrounding white space removed, OP the operator's name and K the index of this mutation
among those OP makes of that line (duplicate lines add @N, the N-th such line).

    test/mutate_gen.py list [--seed S] [--sample N] [FILES...|IDS...]   tab-separated: id line file suite orig new
    test/mutate_gen.py suite FILE                                the suite(s) that cover FILE
    test/mutate_gen.py apply ID                                  write mutation ID into its file

Sampling: every candidate of the files given (default: every mutable file) is listed, sorted by
id, and N drawn with random.Random(S) (default seed 1), spread over the layers: the sample takes
the layers in turn (core, kernels, src, sql, python), one mutation each, so a small N still reaches
every layer.  The same files, seed and N always give the same mutations.
"""
import ast
import glob
import hashlib
import json
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The file -> suite table (first match wins): the fastest suite that covers the file's behaviours.
# A suite name is a test/suites/NAME.sh, "installcheck" or a test/t/NNN_name.pl, with any
# environment before it (as test/mutate.sh's hand-written table).
SUITES = [
    (r"^core/", "core"),
    (r"^kernels/python/kbench_reference\.py$", "operations"),  # (the operations defined as data)
    (r"^kernels/python/kbench_harness\.py$", "byo"),  # (the child of python implementations)
    (r"^kernels/python/kbench_builtin_defs\.py$", "operations"),  # (the data operations' baselines)
    (r"^kernels/python/kbench_providers\.py$", "providers"),  # (Liger's other providers)
    # (kbench_builtin.py's bytes are in test/kernels/manifests.expected: without KI_MANIFESTS_SOURCE
    # every change to it would be caught by that pin, seen or not by a test of its behaviour)
    (r"^kernels/python/", "KI_MANIFESTS_SOURCE=any kernels"),
    (r"^kernels/agent/", "KI_FLEET_JOBS=40 fleet"),
    (r"^kernels/(cache|measure|stats|compare)\.c$", "compare"),
    (r"^kernels/(child|backend_child|impl_source|impl_python|impl_library|impl|entry_check)\.c$", "byo"),
    (r"^kernels/cost\.c$", "costs"),
    (r"^kernels/estimate\.c$", "compare"),  # (its unit tests are test_runner's, which compare.sh runs)
    (r"^kernels/(run|request)\.c$", "gate"),
    (r"^kernels/(registry|opdef)\.c$", "operations"),
    # the C operations: their CPU references (kernels) and their checks against wrong kernels (gate)
    (r"^kernels/ops/", "kernels+gate"),
    (r"^kernels/", "kernels"),
    (r"^src/liger", "liger"),
    (r"^src/(catalog_writer|catalog_import)\.c$", "security"),
    (r"^src/(worker|queue|job_cancel)", "installcheck"),
    (r"^src/", "installcheck"),
    (r"^sql/code/(85_fleet)\.sql$", "fleet_trust"),
    (r"^sql/code/(6[0-9]_[a-z_]+)\.sql$", "charts"),
    (r"^sql/code/(5[0-2]_[a-z_]+)\.sql$", "continuous"),
    (r"^sql/code/(90_privileges|45_reproductions)\.sql$", "security"),  # (installcheck runs no reproduction)
    (r"^sql/code/\d+_memory(_analytics)?\.sql$", "memory"),
    (r"^sql/code/", "installcheck"),
]
# A relative cost of one run of each suite (for --quick's budget); measured here, loaded 2 cores:
# core 11 s, kernels ~60 s, installcheck ~150 s.  Unlisted suites cost 3.
COST = {"core": 1, "kernels": 2, "installcheck": 3}

LAYERS = [("core", r"^core/"), ("kernels", r"^kernels/(?!python/)"), ("src", r"^src/"),
          ("sql", r"^sql/code/"), ("python", r"^kernels/python/")]


def layer_of(path):
    for name, rx in LAYERS:
        if re.search(rx, path):
            return name
    return None


def suite_of(path, line=None):
    for rx, suite in SUITES:
        if re.search(rx, path):
            if path in PER_OP and line is not None:
                # one operation's code: that operation's runs (and its Liger stand-in), not every
                # operation's (operations.sh whole takes ten minutes here, one operation 62 s);
                # shared code: the operations of SHARED_OPS.  Fewer operations can only let more
                # mutations survive, never catch one the whole suite would not: a score taken
                # this way is a lower bound, and a survivor is judged again by the whole suite
                return "KI_OPS=%s %s" % (",".join(ops_at(path, line) or SHARED_OPS), PER_OP[path])
            return suite
    return None


# The python files that hold code of one operation each beside shared code: a mutation inside an
# operation's code (the top-level functions, classes and constants its entry reaches) is judged by
# that operation's runs (KI_OPS, test/lib/tap.sh's only); one in shared code (the dispatcher, the
# comparison, a helper every operation reaches) by the whole suite.
# Shared code is judged by operations that between them reach each kind of value the comparison
# and the dispatch handle: rms_norm (floats, every mode), sparsemax (the reference's "unsure"
# elements), cross_entropy (a scalar loss), embedding (an int64 index input and a sparse
# gradient's rows), kto_loss (a bool input), fused_moe (int32 indices, several outputs), tiled_swiglu
# (an entry that is another operation's function).
SHARED_OPS = ("rms_norm", "sparsemax", "cross_entropy", "embedding", "kto_loss", "fused_moe", "tiled_swiglu")
PER_OP = {"kernels/python/kbench_builtin_defs.py": "operations+liger_standins",
          "kernels/python/kbench_reference.py": "operations+liger_standins"}


def _op_entries(path, tree):
    """{operation: the top-level name its entry is} of a PER_OP file."""
    if path.endswith("kbench_reference.py"):
        out = {}
        for f in glob.glob(os.path.join(ROOT, "kernels/ops/defs/*.json")):
            with open(f, encoding="utf-8") as fh:
                d = json.load(fh)
            if isinstance(d.get("reference"), dict) and d["reference"].get("python"):
                out[d["name"]] = d["reference"]["python"]
        return out
    for node in tree.body:  # kbench_builtin_defs.py: OPS = {"op": function, ...}
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPS" for t in node.targets):
            return {k.value: v.id for k, v in zip(node.value.keys, node.value.values)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Name)}
    return {}


def ops_at(path, line):
    """The operations whose own code holds line `line` of path (a PER_OP file), sorted; None when
    the line is not in one operation's code or is reached by every operation."""
    if path not in PER_OP:
        return None
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError):
        return None
    nodes = {}  # top-level name -> (first line, last line, the names it uses)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        else:
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for name in names:
            nodes[name] = (first, node.end_lineno, used)
    at = [name for name, (a, b, _) in nodes.items() if a <= line <= b]
    if not at or at[0] == "OPS":
        return None
    entries = _op_entries(path, tree)
    reached_by = []
    for op, entry in entries.items():
        seen, todo = set(), [entry]
        while todo:
            n = todo.pop()
            if n in seen or n not in nodes:
                continue
            seen.add(n)
            todo.extend(nodes[n][2] & nodes.keys())
        if at[0] in seen:
            reached_by.append(op)
    if not reached_by or len(reached_by) == len(entries):
        return None
    return sorted(reached_by)


def mutable_files():
    out = []
    for top, exts in (("core", (".c",)), ("kernels", (".c", ".py")), ("src", (".c",)),
                      ("sql/code", (".sql",))):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(d, ROOT)
            if "/build" in "/" + rel or rel.startswith("kernels/cuda") or "/tests" in rel:
                continue
            for f in files:
                p = os.path.join(rel, f)
                if f.endswith(exts) and (not f.endswith(".py") or p.startswith("kernels/python/")):
                    out.append(p)
    return sorted(out)


def is_mutable(path):
    return layer_of(path) is not None and (
        path.endswith(".c") and not path.startswith("kernels/python/")
        or path.endswith(".sql") and path.startswith("sql/code/")
        or path.endswith(".py") and path.startswith("kernels/python/"))


# ---- masking: strings and comments become spaces of the same length (operators do not fire there)

def mask_c(line, state):
    out = []
    i, n = 0, len(line)
    while i < n:
        if state["comment"]:
            j = line.find("*/", i)
            if j < 0:
                out.append(" " * (n - i)); i = n; break
            out.append(" " * (j + 2 - i)); i = j + 2; state["comment"] = False
            continue
        c = line[i]
        if line.startswith("/*", i):
            state["comment"] = True; out.append("  "); i += 2
        elif line.startswith("//", i):
            out.append(" " * (n - i)); i = n
        elif c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + (c if j - i >= 2 else "")); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


def mask_sql(line, state):
    out = []
    i, n = 0, len(line)
    while i < n:
        if state["comment"]:
            j = line.find("*/", i)
            if j < 0:
                out.append(" " * (n - i)); i = n; break
            out.append(" " * (j + 2 - i)); i = j + 2; state["comment"] = False
            continue
        c = line[i]
        if line.startswith("/*", i):
            state["comment"] = True; out.append("  "); i += 2
        elif line.startswith("--", i):
            out.append(" " * (n - i)); i = n
        elif c == "'":
            j = i + 1
            while j < n:
                if line[j] == "'" and j + 1 < n and line[j + 1] == "'":
                    j += 2
                elif line[j] == "'":
                    break
                else:
                    j += 1
            j = min(j + 1, n)
            out.append("'" + " " * max(j - i - 2, 0) + ("'" if j - i >= 2 else "")); i = j
        elif c == '"':
            j = line.find('"', i + 1)
            j = n if j < 0 else j + 1
            out.append(" " * (j - i)); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


def mask_py(line, state):
    s = line.strip()
    q = state.get("doc")
    if q:
        if q in s:
            state["doc"] = None
        return " " * len(line)
    for t in ('"""', "'''"):
        if s.startswith(t) or (t in s and s.count(t) % 2 == 1):
            if s.count(t) == 1:
                state["doc"] = t
            return " " * len(line)
    out = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "#":
            out.append(" " * (n - i)); break
        if c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(j - i - 2, 0) + (c if j - i >= 2 else "")); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


# ---- operators: each yields (start, end, replacement) on the masked line

def subs(masked, rx, repl):
    for m in re.finditer(rx, masked):
        r = repl(m) if callable(repl) else repl
        if r is not None:
            yield m.start(), m.end(), r


CMP_C = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
CMP_RX_C = r"(?<![<>=!\-&|+*/%^])(<=|>=|==|!=|<|>)(?![<>=])"


def const_repl(m):
    v = int(m.group(0))
    return [str(v + 1)] + ([str(v - 1)] if v > 1 else [])


def balanced_call(masked, start):
    """start: index of '(' -> index after the matching ')' on this line, or None."""
    depth = 0
    for j in range(start, len(masked)):
        if masked[j] == "(":
            depth += 1
        elif masked[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return None


def escape_calls(masked, rx):
    for m in re.finditer(rx, masked):
        end = balanced_call(masked, m.end() - 1)
        before = masked[:m.start()]
        # (not a definition or declaration of such a function: C's at the line's start or after a
        # type, SQL's after FUNCTION)
        if end is None or not before.strip() and not m.group(0).startswith(("quote", "kbench")) \
                or re.search(r"(FUNCTION|\b(?!return\b)[A-Za-z_]\w*\s*\**)\s+$", before):
            continue
        inner = masked[m.end():end - 1]
        # one argument only (a top-level comma means more)
        depth = 0
        if any((depth := depth + (ch == "(") - (ch == ")")) == 0 and ch == "," for ch in inner):
            continue
        yield m.start(), end, "(" + "\0" + str(m.end()) + ":" + str(end - 1) + ")"


def cond_if(masked, rx):
    for m in re.finditer(rx, masked):
        end = balanced_call(masked, m.end() - 1)
        if end is not None:
            yield m.end() - 1, end, "(1)"


def candidates_c(line, masked):
    s = masked.lstrip()
    if s.startswith("#") or not s.strip():
        return
    yield "cmp", list(subs(masked, CMP_RX_C, lambda m: CMP_C[m.group(1)]))
    yield "bool", list(subs(masked, r"&&|\|\|", lambda m: "||" if m.group(0) == "&&" else "&&"))
    # (not an array's size in a declaration: a buffer one byte larger or smaller is rarely a bug a
    # test can see, and a smaller one is memory corruption, not a behaviour)
    # (nor a buffer's initial capacity, ki_buf_init's last argument: buffers grow, and under 64
    # the arena rounds it up, so no behaviour depends on it)
    yield "const", [(a, b, r) for a, b, rs in subs(masked, r"(?<![\w.])\d+(?![\w.])", const_repl) for r in rs
                    if not re.match(r"\]\s*(\[[^\]]*\]\s*)*[;=,]", masked[b:])
                    and not re.search(r"\bki_buf_init\(", masked)]
    yield "cond", list(cond_if(masked, r"\bif \("))
    yield "minmax", list(subs(masked, r"\b(Min|Max|fmin|fmax|fminf|fmaxf|MIN|MAX)(?=\()",
                              lambda m: {"Min": "Max", "Max": "Min", "fmin": "fmax", "fmax": "fmin",
                                         "fminf": "fmaxf", "fmaxf": "fminf", "MIN": "MAX", "MAX": "MIN"}[m.group(1)]))
    yield "escape", list(escape_calls(masked, r"\b\w*(escape|quote_identifier|quote_literal)\w*\("))


CMP_SQL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "=": "<>", "<>": "=", "!=": "="}


def candidates_sql(line, masked):
    if not masked.strip():
        return
    # (= only where it compares: not := => nor a SET/DEFAULT assignment)
    assign = re.search(r"\b(SET|DEFAULT|UPDATE)\b", masked) is not None
    yield "cmp", list(subs(masked, r"(?<![<>=!:|@&~#^*/+\-])(<=|>=|<>|!=|<|>|=)(?![<>=@&|~#^*/+\-])",
                           lambda m: None if (m.group(1) == "=" and assign) else CMP_SQL[m.group(1)]))
    yield "bool", list(subs(masked, r"\b(AND|OR)\b(?! REPLACE\b)", lambda m: "OR" if m.group(1) == "AND" else "AND"))
    yield "const", [(a, b, r) for a, b, rs in subs(masked, r"(?<![\w.$:])\d+(?![\w.])", const_repl) for r in rs]
    yield "cond", list(subs(masked, r"\bWHERE (?=\S)", "WHERE true OR ")) + \
        list(subs(masked, r"\b(ELS)?IF (?!NOT EXISTS\b|EXISTS\b(?= [a-z_]+;))(?=.*\bTHEN\b)",
                  lambda m: (m.group(1) or "") + "IF true OR "))
    yield "minmax", list(subs(masked, r"\b(min|max|least|greatest|MIN|MAX|LEAST|GREATEST)(?=\()",
                              lambda m: {"min": "max", "max": "min", "least": "greatest", "greatest": "least",
                                         "MIN": "MAX", "MAX": "MIN", "LEAST": "GREATEST",
                                         "GREATEST": "LEAST"}[m.group(1)]))
    yield "order", list(subs(masked, r"\b(ASC|DESC)\b", lambda m: "DESC" if m.group(1) == "ASC" else "ASC"))
    esc = list(escape_calls(masked, r"(?<![\w.@])[\w.@]*(escape|quote_ident|quote_literal|quote_nullable|markdown_cell)\w*\("))
    # format('%I') / '%L': the placeholders sit inside a (masked) string: read them from the line
    if re.search(r"\bformat\(", masked):
        esc += [(m.start(), m.end(), "%s") for m in re.finditer(r"%[IL]", line)]
    yield "escape", esc


CMP_PY = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}


def candidates_py(line, masked):
    if not masked.strip():
        return
    yield "cmp", list(subs(masked, r"(?<![<>=!\-+*/%&|^])(<=|>=|==|!=|<|>)(?![<>=])", lambda m: CMP_PY[m.group(1)]))
    yield "bool", list(subs(masked, r"\b(and|or)\b", lambda m: "or" if m.group(1) == "and" else "and"))
    yield "const", [(a, b, r) for a, b, rs in subs(masked, r"(?<![\w.])\d+(?![\w.])", const_repl) for r in rs]
    yield "cond", [(m.start(2), m.end(2), "True") for m in re.finditer(r"^\s*(if|elif) (.+?):\s*$", masked)]
    yield "minmax", list(subs(masked, r"\b(min|max)(?=\()", lambda m: "max" if m.group(1) == "min" else "min"))


def mutations_of(path):
    full = os.path.join(ROOT, path)
    with open(full, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    if path.endswith(".c"):
        mask, gen = mask_c, candidates_c
    elif path.endswith(".sql"):
        mask, gen = mask_sql, candidates_sql
    else:
        mask, gen = mask_py, candidates_py
    state = {"comment": False}
    seen = {}
    out = []
    for no, line in enumerate(lines, 1):
        masked = mask(line, state)
        h = hashlib.sha1(line.strip().encode("utf-8", "surrogateescape")).hexdigest()[:10]
        seen[h] = seen.get(h, 0) + 1
        dup = "" if seen[h] == 1 else "@%d" % seen[h]
        for op, edits in gen(line, masked):
            for k, (a, b, r) in enumerate(edits):
                if "\0" in r:  # an escape call dropped: keep its argument's original text
                    lo, hi = map(int, r[2:-1].split(":"))
                    r = "(" + line[lo:hi] + ")"
                new = line[:a] + r + line[b:]
                if new != line:
                    out.append(("%s:%s%s:%s:%d" % (path, h, dup, op, k), no, path, line, new))
    return out


def sample(files, seed, n):
    cands = []
    for p in files:
        cands.extend(mutations_of(p))
    cands.sort(key=lambda c: c[0])
    if n is None or n >= len(cands):
        return cands
    rng = random.Random(seed)
    # layer -> operator -> candidates, each list shuffled; the sample takes the layers in turn and,
    # in each, the operators in turn (the off-by-one constants, half of all candidates, would
    # otherwise crowd out the rarer operators)
    by = {}
    for c in cands:
        by.setdefault(layer_of(c[2]), {}).setdefault(c[0].split(":")[2], []).append(c)
    turn = {}
    for name in sorted(by):
        for op in sorted(by[name]):
            rng.shuffle(by[name][op])
        turn[name] = sorted(by[name])
        rng.shuffle(turn[name])
    order = [name for name, _ in LAYERS if name in by]
    picked = []
    while len(picked) < n:
        for name in order:
            ops = [op for op in turn[name] if by[name][op]]
            if not ops or len(picked) >= n:
                continue
            op = ops[0]
            turn[name].remove(op); turn[name].append(op)
            picked.append(by[name][op].pop())
    return picked


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr); return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "suite":
        s = suite_of(rest[0])
        print(s or ""); return 0 if s else 1
    if cmd == "cost":
        print(COST.get(rest[0].split()[-1], 3)); return 0
    if cmd == "mutable":
        for p in rest:
            if is_mutable(p) and os.path.exists(os.path.join(ROOT, p)):
                print(p)
        return 0
    if cmd == "apply":  # apply ID: write the mutation ID into its file (in this tree)
        mid = rest[0]
        path = mid.split(":")[0]
        hits = [c for c in mutations_of(path) if c[0] == mid]
        if not hits:
            print("mutate_gen.py: no mutation %s here" % mid, file=sys.stderr); return 1
        _, no, _, _, new = hits[0]
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")
        lines[no - 1] = new
        with open(os.path.join(ROOT, path), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(lines))
        return 0
    if cmd == "list":
        seed, n, files = 1, None, []
        i = 0
        while i < len(rest):
            if rest[i] == "--seed":
                seed = int(rest[i + 1]); i += 2
            elif rest[i] == "--sample":
                n = int(rest[i + 1]); i += 2
            else:
                files.append(rest[i]); i += 1
        ids = [a for a in files if ":" in a]  # (an id names one mutation: run just those)
        files = [a for a in files if ":" not in a]
        if ids:
            chosen = [c for p in sorted({i.split(":")[0] for i in ids}) for c in mutations_of(p) if c[0] in ids]
        else:
            files = [p for p in files if is_mutable(p)] if files else mutable_files()
            chosen = sample(files, seed, n)
        for mid, no, path, orig, new in chosen:
            print("\t".join((mid, str(no), path, suite_of(path, no), orig.replace("\t", "\\t"),
                             new.replace("\t", "\\t"))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
