#!/usr/bin/env python3
"""png_stats.py FILE...: for each PNG, print "FILE WIDTH HEIGHT INKED DISTINCT".

INKED is the fraction of pixels that differ from the top-left pixel (the
background), DISTINCT the number of distinct colours.  Plain Python (zlib):
8-bit greyscale, RGB, grey+alpha or RGBA, not interlaced, as rsvg-convert and
Chromium write them.  Used by test/suites/charts.sh to tell a drawn chart from
a blank one."""
import struct
import sys
import zlib


def pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)" % (depth, ctype, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = w * channels
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, channels, rows


for path in sys.argv[1:]:
    w, h, ch, rows = pixels(path)
    bg = rows[0][:ch]
    inked = 0
    colours = set()
    for r in rows:
        for x in range(0, w * ch, ch):
            px = r[x:x + ch]
            colours.add(px)
            if px != bg:
                inked += 1
    print("%s %d %d %.4f %d" % (path, w, h, inked / float(w * h), len(colours)))
