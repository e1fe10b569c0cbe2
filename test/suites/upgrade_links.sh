#!/usr/bin/env bash
# upgrade_links.sh: every SQL object's body is written once
# (docs/ARCHITECTURE.md, "Upgrades").  The fragments of an unreleased
# upgrade script (sql/updates/A--B/NN_*.sql) reach the bodies of the install
# parts (sql/NN_*.sql) through symbolic links, never through copies:
#   - every link names an install part that exists, and no part is linked
#     twice in one upgrade (it would run twice);
#   - no install part creates a function, procedure, view or aggregate that
#     an earlier part created (a body the fresh install replaces);
#   - no fragment that is a file of its own creates a function, procedure,
#     view or aggregate that an install part creates too (a hand copy that
#     can drift from the part); C declarations (AS 'MODULE_PATHNAME') have
#     no body and are not counted.
# Reads files only: no cluster.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
exec python3 - <<'PY'
import glob, os, re

parts = sorted(glob.glob('sql/[0-9][0-9]_*.sql'))
released = {os.path.basename(p) for p in glob.glob('sql/released/*.sql')}

# CREATE statements with a body: the name of each object a file creates.
CREATE = re.compile(r'^CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE|VIEW|AGGREGATE)\s+([a-z_0-9.@]+)',
                    re.I | re.M)

def statements(text):
    """The file's statements, split at ';' outside dollar quotes and comments."""
    out, cur, i, n = [], [], 0, len(text)
    quote = None
    while i < n:
        if quote:
            j = text.find(quote, i)
            if j < 0:
                cur.append(text[i:]); break
            cur.append(text[i:j + len(quote)]); i = j + len(quote); quote = None
            continue
        c = text[i]
        if text.startswith('--', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            i = j
            continue
        if c == "'":
            j = i + 1
            while j < n:
                if text[j] == "'" and text[j + 1:j + 2] == "'":
                    j += 2
                elif text[j] == "'":
                    break
                else:
                    j += 1
            cur.append(text[i:j + 1]); i = j + 1
            continue
        m = re.match(r'\$[a-zA-Z_]*\$', text[i:])
        if m:
            quote = m.group(0); cur.append(quote); i += len(quote)
            continue
        if c == ';':
            out.append(''.join(cur).strip()); cur = []; i += 1
            continue
        cur.append(c); i += 1
    if ''.join(cur).strip():
        out.append(''.join(cur).strip())
    return out

def bodies(path):
    """(kind, name) of every object the file creates with a body."""
    found = []
    with open(path, encoding='utf-8') as f:
        for st in statements(f.read()):
            m = CREATE.match(st)
            if not m or "'MODULE_PATHNAME'" in st:
                continue
            name = m.group(2).split('.')[-1].lower()
            found.append((m.group(1).upper(), name))
    return found

in_parts, again = {}, []
for p in parts:
    for kind, name in sorted(set(bodies(p))):
        if name in in_parts and in_parts[name] != p:
            again.append('%s %s (%s, %s)' % (kind.lower(), name, in_parts[name], p))
        in_parts.setdefault(name, p)

fails = 0
def check(ok, what):
    global fails
    print(('ok - ' if ok else 'not ok - ') + what)
    if not ok:
        fails += 1

check(not again, 'the install parts create each object once%s' % (': again ' + '; '.join(again) if again else ''))
for d in sorted(glob.glob('sql/updates/*--*')):
    version = os.path.basename(d)
    if 'kernelindex--%s.sql' % version.split('--')[1] in released:
        continue          # B is released: its upgrade script holds copies, and never changes
    frags = sorted(glob.glob(d + '/[0-9][0-9]_*.sql'))
    links, copies, broken = {}, [], []
    for f in frags:
        if os.path.islink(f):
            target = os.path.normpath(os.path.join(d, os.readlink(f)))
            if target not in parts:
                broken.append('%s -> %s' % (os.path.basename(f), os.readlink(f)))
            links.setdefault(target, []).append(os.path.basename(f))
            continue
        for kind, name in bodies(f):
            if name in in_parts:
                copies.append('%s: %s %s (written in %s)' % (os.path.basename(f), kind.lower(), name, in_parts[name]))
    twice = ['%s (%s)' % (t, ', '.join(l)) for t, l in sorted(links.items()) if len(l) > 1]
    check(not broken, '%s: every link names an install part%s' % (version, ': broken ' + '; '.join(broken) if broken else ''))
    check(not twice, '%s: no install part is linked twice%s' % (version, ': ' + '; '.join(twice) if twice else ''))
    check(not copies, '%s: no fragment copies the body of an object an install part creates%s'
          % (version, ': ' + '; '.join(copies) + ' (link the part instead)' if copies else ''))
    check(len(links) > 0, '%s: the fragments link install parts (%d links)' % (version, sum(len(l) for l in links.values())))
raise SystemExit(1 if fails else 0)
PY
