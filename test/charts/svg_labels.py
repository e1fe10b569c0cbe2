#!/usr/bin/env python3
"""svg_labels.py FILE...: the text of a chart, as boxes, and what overlaps.

For each SVG prints "FILE TEXTS OVERLAPS" and then, indented, each pair of
<text> elements whose boxes intersect (issue 29: labels never overlap).  A
box is estimated as the charts' own placement does, but independently: its
width len(text) * font-size * 0.62 (DejaVu Sans' average advance, bold 0.7),
from its x by its text-anchor, its height from y - 0.8 em to y + 0.2 em;
translate() on enclosing groups (the panels) and the rotated axis title
(translate + rotate(-90)) are followed.  Font sizes are inherited from the
enclosing elements.  With --json, prints the boxes too.  Other modes print
one JSON line a file: --ticks the tick labels ({"x": [[...] a panel],
"y": ...}), --styles each series' colour, dash pattern and marker shape,
--headings the legend's group headings (bold 12 px text); --text prints
the text of every <text>, joined by spaces (a wrapped sentence whole).  Plain Python."""
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def boxes(root):
    out = []

    def walk(el, dx, dy, fs, weight):
        tr = el.get("transform", "")
        rot = False
        m = re.search(r"translate\(\s*([-0-9.]+)[ ,]+([-0-9.]+)\s*\)", tr)
        if m:
            dx, dy = dx + float(m.group(1)), dy + float(m.group(2))
        if "rotate(-90)" in tr:
            rot = True
        fs = float(el.get("font-size", fs))
        weight = el.get("font-weight", weight)
        if el.tag == NS + "text":
            text = "".join(el.itertext())
            w = len(text) * fs * (0.7 if weight == "bold" else 0.62)
            x = float(el.get("x", 0))
            y = float(el.get("y", 0))
            anchor = el.get("text-anchor", "start")
            x0 = x - {"start": 0, "middle": w / 2, "end": w}[anchor]
            if rot:   # rotated about its own origin: the run goes up the page
                bx = (dx + y - 0.8 * fs, dy - x0 - w, dx + y + 0.2 * fs, dy - x0)
            else:
                bx = (dx + x0, dy + y - 0.8 * fs, dx + x0 + w, dy + y + 0.2 * fs)
            out.append({"text": text, "box": [round(v, 1) for v in bx]})
            return
        for c in el:
            walk(c, dx, dy, fs, weight)

    walk(root, 0.0, 0.0, float(root.get("font-size", 16)), None)
    return out


def overlaps(bs):
    bad = []
    for i in range(len(bs)):
        a = bs[i]["box"]
        for j in range(i + 1, len(bs)):
            b = bs[j]["box"]
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                bad.append((bs[i]["text"], bs[j]["text"]))
    return bad


def ticks(root, cls):
    """the tick labels of each panel's axis (class x-ticks or y-ticks), one panel a line"""
    out = []
    for g in root.iter(NS + "g"):
        if g.get("class") == cls:
            out.append([("".join(t.itertext())) for t in g.iter(NS + "text")])
    return out


def styles(root):
    """each series' look: stroke colour, dash pattern, marker shape (tag and path without its start)"""
    out = []
    for g in root.iter(NS + "g"):
        if g.get("class") != "series":
            continue
        line = g.find(NS + "polyline")
        mk = [c for c in g if c.tag in (NS + "circle", NS + "rect", NS + "path")]
        shape = None
        if mk:
            shape = mk[0].tag[len(NS):] + ":" + re.sub(r"^M[-0-9.]+,[-0-9.]+", "", mk[0].get("d", ""))
        colour = line.get("stroke") if line is not None else (mk[0].get("stroke") if mk else None)
        out.append({"colour": colour, "dash": line.get("stroke-dasharray", "") if line is not None else None, "shape": shape})
    return out


mode = None
for m in ("--json", "--ticks", "--styles", "--headings", "--text"):
    if m in sys.argv:
        mode = m
args = [a for a in sys.argv[1:] if not a.startswith("--")]
for path in args:
    if mode in ("--ticks", "--styles", "--headings", "--text"):
        root = ET.parse(path).getroot()
        if mode == "--text":
            print(" ".join("".join(t.itertext()) for t in root.iter(NS + "text")))
        elif mode == "--ticks":
            print(json.dumps({"x": ticks(root, "x-ticks"), "y": ticks(root, "y-ticks")}, ensure_ascii=False))
        elif mode == "--styles":
            print(json.dumps(styles(root)))
        else:
            print(json.dumps(["".join(t.itertext()) for t in root.iter(NS + "text") if t.get("font-weight") == "bold" and t.get("font-size") is None], ensure_ascii=False))
        continue
    root = ET.parse(path).getroot()
    bs = boxes(root)
    bad = overlaps(bs)
    print("%s %d %d" % (path, len(bs), len(bad)))
    for a, b in bad[:10]:
        print("  overlap: %r / %r" % (a, b))
    if mode == "--json":
        print(json.dumps(bs))
