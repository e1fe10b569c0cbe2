#!/usr/bin/env bash
# upgrade_scripts.sh: the install and update scripts are generated from
# schema, code and modfiles (docs/UPGRADES.md), each body
# written once:
#   - nothing under sql/ is a symbolic link;
#   - every code file (sql/code/, and sql/prelude/) is re-runnable: its
#     functions, procedures, views, aggregates and triggers are CREATE OR
#     REPLACE, it makes no table, type or sequence, and no two code files
#     create the same object;
#   - the schema files (sql/schema/) create no function, view or trigger;
#   - no modfile (sql/updates/A--B.sql) creates a function, procedure, view,
#     aggregate or trigger (no body, not even a C declaration);
#   - `make` builds kernelindex--VERSION.sql = prelude + schema + code and,
#     for every release X a modfile starts from, kernelindex--X--VERSION.sql
#     = prelude + the modfiles from X on, in order + every code file.
# Reads and builds files only: no cluster.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
make -s sql/kernelindex--$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control).sql \
  $(for m in sql/updates/*--*.sql; do v=$(basename "$m" .sql); echo "sql/kernelindex--${v%%--*}--$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control).sql"; done) >/dev/null ||
  { echo "not ok - make builds the install and update scripts"; exit 1; }
echo "ok - make builds the install and update scripts"
exec python3 - <<'PY'
import glob, os, re

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

CREATE = re.compile(r'^CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE|VIEW|AGGREGATE|TRIGGER)\s+([a-z_0-9.@]+)', re.I)
DATA = re.compile(r'^CREATE\s+(UNLOGGED\s+)?(TABLE|TYPE|SEQUENCE|DOMAIN)\b', re.I)

def stmts(path):
    with open(path, encoding='utf-8') as f:
        return statements(f.read())

def version_key(v):
    return [int(x) for x in v.split('.')]

cur = re.search(r"^default_version *= *'(.*)'", open('kernelindex.control').read(), re.M).group(1)
prelude = sorted(glob.glob('sql/prelude/*.sql'))
schema = sorted(glob.glob('sql/schema/*.sql'))
code = sorted(glob.glob('sql/code/*.sql'))
mods = sorted(glob.glob('sql/updates/*--*.sql'), key=lambda m: version_key(os.path.basename(m).split('--')[0]))

fails = 0
def check(ok, what, why=''):
    global fails
    print(('ok - ' if ok else 'not ok - ') + what + ('' if ok or not why else ': ' + why))
    if not ok:
        fails += 1

links = [os.path.join(d, f) for d, ds, fs in os.walk('sql') for f in fs + ds if os.path.islink(os.path.join(d, f))]
check(not links, 'no symbolic link under sql/', ', '.join(links))
check(len(code) > 10 and len(schema) > 5 and len(mods) > 0, 'sql/schema, sql/code and sql/updates hold the SQL (%d, %d, %d files)' % (len(schema), len(code), len(mods)))

plain, data, made, again = [], [], {}, []
for f in prelude + code:
    for st in stmts(f):
        m = CREATE.match(st)
        if m:
            if not m.group(1):
                plain.append('%s: %s %s' % (f, m.group(2).lower(), m.group(3)))
            key = (m.group(2).upper(), m.group(3).lower(), re.search(r'\sON\s+(\w+)', st).group(1) if m.group(2).upper() == 'TRIGGER' else '')
            if key in made and made[key] != f:
                again.append('%s %s (%s, %s)' % (key[0].lower(), key[1], made[key], f))
            made.setdefault(key, f)
        if DATA.match(st) or re.match(r'^CREATE\s+(UNIQUE\s+)?INDEX\s+(?!IF NOT EXISTS)', st, re.I):
            data.append('%s: %s' % (f, ' '.join(st.split()[:4])))
check(not plain, 'every function, view, aggregate and trigger of the code is CREATE OR REPLACE', '; '.join(plain))
check(not data, 'the code makes no table, type, sequence (and indexes only IF NOT EXISTS)', '; '.join(data))
check(not again, 'no two code files create the same object', '; '.join(again))
inschema = ['%s: %s' % (f, ' '.join(st.split()[:4])) for f in schema for st in stmts(f) if CREATE.match(st)]
check(not inschema, 'the schema files create no function, view or trigger', '; '.join(inschema))
for m in mods:
    bodies = [' '.join(st.split()[:5]) for st in stmts(m) if CREATE.match(st)]
    check(not bodies, '%s holds no function body (no function, view or trigger)' % os.path.basename(m), '; '.join(bodies))

def text(fs):
    return ''.join(open(f, encoding='utf-8').read() for f in fs)
def body_of(script):
    t = open(script, encoding='utf-8').read()
    return t.split('\\quit\n', 1)[1] if '\\quit\n' in t else None
b = body_of('sql/kernelindex--%s.sql' % cur)
check(b == text(prelude + schema + code), 'kernelindex--%s.sql is prelude + schema + code' % cur)
for i, m in enumerate(mods):
    x = os.path.basename(m).split('--')[0]
    chain, v = [], x
    for n in mods:
        a, bb = os.path.basename(n)[:-4].split('--')
        if a == v:
            chain.append(n); v = bb
    script = 'sql/kernelindex--%s--%s.sql' % (x, cur)
    ok = os.path.exists(script) and v == cur and body_of(script) == text(prelude + chain + code)
    check(ok, '%s: prelude + %s + every code file' % (os.path.basename(script), ' + '.join(os.path.basename(c) for c in chain)))
# every release an update starts from is a commit of this clone whose control file says it
import subprocess
rel = {}
for line in open('sql/updates/RELEASES', encoding='utf-8'):
    f = line.split()
    if f and not f[0].startswith('#'):
        rel[f[0]] = f[1] if len(f) == 2 else ''
for m in mods:
    x = os.path.basename(m).split('--')[0]
    c = rel.get(x, '')
    ctl = subprocess.run(['git', 'show', c + ':kernelindex.control'], capture_output=True, text=True) if c else None
    said = re.search(r"^default_version *= *'(.*)'", ctl.stdout, re.M) if ctl and ctl.returncode == 0 else None
    check(said is not None and said.group(1) == x,
          'release %s (the start of %s) is commit %s of sql/updates/RELEASES, whose control file says %s' % (x, os.path.basename(m), c[:12] or '(none)', x),
          'no such line' if not c else ('commit not in this clone' if said is None else 'its control file says ' + said.group(1)))
raise SystemExit(1 if fails else 0)
PY
