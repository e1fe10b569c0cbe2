#!/usr/bin/env python3
"""Do the built-in python implementations' names agree?  The C library names
them once (kernels/impl_name.c, kb_builtin_python: what kbench list --json
prints as each operation's pythonImplementations); the python side names
them in kernels/python/kbench_builtin.py (factory's check) with the
operations it has (OPS).  The file's bytes are digested into every built-in
python run's ImplementationRevision, so it is read here, not rewritten to
ask C.  Liger's other providers (kernels/impl_name.c, kb_providers) are
listed only for the operations Liger benchmarks them with, after the three;
kernels/python/kbench_providers.py (PROVIDERS) must give each the same
operations.  Prints what differs and exits 1; exits 0 when both agree.

usage: builtin_names.py path/to/kbench path/to/kbench_builtin.py
"""
import ast
import json
import subprocess
import os
import sys


def python_side(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = ops = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "factory":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare) and isinstance(sub.ops[0], ast.NotIn) \
                        and isinstance(sub.left, ast.Name) and sub.left.id == "name":
                    names = [e.value for e in sub.comparators[0].elts]
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPS" for t in node.targets):
            ops = sorted(k.value for k in node.value.keys)
    return names, ops


def providers_side(path):
    """PROVIDERS of kbench_providers.py: {provider: sorted operations}, read without running it."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROVIDERS" for t in node.targets):
            return {k.value: sorted(o.value for o in v.elts[0].keys) for k, v in zip(node.value.keys, node.value.values)}
    return None


def main():
    listing = json.loads(subprocess.run([sys.argv[1], "list", "--json"], capture_output=True, text=True,
                                        check=True).stdout)
    names, ops = python_side(sys.argv[2])
    # the operations defined as data have their baselines in kbench_builtin_defs.py beside it
    defs = sys.argv[2][:-3] + "_defs.py"
    if ops is not None and os.path.exists(defs):
        dnames, dops = python_side(defs)
        if dnames != names:
            print("kbench_builtin_defs.py accepts %s, kbench_builtin.py %s" % (dnames, names))
            sys.exit(1)
        ops = sorted(ops + (dops or []))
    bad = []
    c_ops = sorted(o["name"] for o in listing["operations"])
    provs = providers_side(os.path.join(os.path.dirname(sys.argv[2]), "kbench_providers.py"))
    if not provs:
        bad.append("kbench_providers.py has no PROVIDERS")
        provs = {}
    for o in listing["operations"]:
        listed = o["pythonImplementations"]
        if listed[:len(names or [])] != names:
            bad.append("%s: kbench lists %s, kbench_builtin.py accepts %s" % (o["name"], listed, names))
        want = sorted(p for p, ops in provs.items() if o["name"] in ops)
        if sorted(listed[len(names or []):]) != want:
            bad.append("%s: kbench lists the providers %s, kbench_providers.py serves it with %s"
                       % (o["name"], listed[len(names or []):], want))
    if ops != c_ops:
        bad.append("kbench_builtin.py has operations %s, kbench %s" % (ops, c_ops))
    for b in bad:
        print(b)
    sys.exit(1 if bad or not names else 0)


if __name__ == "__main__":
    main()
