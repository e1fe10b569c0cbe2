"""settings_doc.py: docs/SQL.md's settings table against pg_settings.

    python3 test/lib/settings_doc.py docs/SQL.md < pg_settings.tsv

The tsv holds name, boot_val, min_val, max_val, unit, vartype of every kernelindex.* setting
(psql -At -F tab).  Prints one TAP line per setting (documented, default, range), then one for
table rows naming no setting.  Durations are compared in the setting's unit (s), from the
table's 10min, 7d, 30s: the table is read as a user reads it, not as the code writes it.
"""
import re
import sys

UNITS = {"s": 1, "min": 60, "h": 3600, "d": 86400}


def seconds(text):
    m = re.fullmatch(r"(\d+)(s|min|h|d)", text)
    return int(m.group(1)) * UNITS[m.group(2)] if m else None


def value(text, unit):
    """A table cell (`10min`, `''`, `on`) as pg_settings writes it."""
    text = text.strip().strip("`")
    if text == "''":
        return ""
    if unit == "s":
        n = seconds(text)
        return str(n) if n is not None else "unparsed " + text
    return text


def main():
    rows = {}
    for line in open(sys.argv[1], encoding="utf-8"):
        m = re.match(r"\| `(kernelindex\.[a-z_]+)` \|([^|]*)\|([^|]*)\|", line)
        if m:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    seen = set()
    for line in sys.stdin.read().splitlines():
        name, boot, lo, hi, unit, vartype = (line.split("\t") + [""] * 6)[:6]
        seen.add(name)
        if name not in rows:
            print("not ok - %s is in docs/SQL.md's settings table" % name)
            continue
        default, rng = rows[name]
        got = value(default, unit)
        print(("ok" if got == boot else "not ok") + " - %s: the table's default %s is the server's %s%s"
              % (name, default, boot, unit))
        if vartype in ("integer", "real"):
            m = re.fullmatch(r"`([^`]+)` to `([^`]+)`", rng)
            got = (value(m.group(1), unit), value(m.group(2), unit)) if m else ("no range", rng)
            print(("ok" if got == (lo, hi) else "not ok") + " - %s: the table's range %s is the server's %s to %s%s (read %s)"
                  % (name, rng, lo, hi, unit, " to ".join(got)))
        elif rng:
            print("not ok - %s: a %s setting has no range in the table (%s)" % (name, vartype, rng))
    extra = sorted(set(rows) - seen)
    print(("ok" if not extra else "not ok") + " - the settings table names no setting the server lacks%s"
          % ("" if not extra else ": " + ", ".join(extra)))


if __name__ == "__main__":
    main()
