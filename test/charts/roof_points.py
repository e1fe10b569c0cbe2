"""roof_points.py: a roofline chart's roofs read back against the roofline model.

    python3 test/charts/roof_points.py CHART.svg

Each roof (a series titled 'roof K: BW B/s × intensity, PEAK FLOP/s') is a polyline on log
axes.  Its points are mapped back to data through the chart's own tick labels (the first and the
last tick of each axis, '0.5', '2', '500G', '10T') and each must lie on min(BW × x, PEAK): the
bandwidth roof up to the ridge, flat after it.  Prints "roofs N, points M, worst error under 2%" (the
largest relative distance of a point from the model), or what it could not read.
"""
import math
import re
import sys

SI = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def number(text):
    m = re.fullmatch(r"([0-9.]+)\s*([kKMGTPE]?)", text.strip())
    if not m:
        raise ValueError("not a number: %r" % text)
    return float(m.group(1)) * SI[m.group(2)]


def axis(svg, cls, coord):
    g = re.search(r'<g class="%s"[^>]*>(.*?)</g>' % cls, svg, re.S)
    ticks = [(float(m.group(1)), number(m.group(2)))
             for m in re.finditer(r'<text [^>]*?%s="([0-9.]+)"[^>]*>([^<]+)</text>' % coord, g.group(1))]
    if coord == "y":
        # a y label sits below its grid line (its baseline): the horizontal grid lines, in the
        # labels' order, give the positions
        grid = [float(m.group(1)) for m in re.finditer(r'<line x1="[0-9.]+" y1="([0-9.]+)" x2="[0-9.]+" y2="\1"/>', svg)]
        if len(grid) != len(ticks):
            raise ValueError("%d y labels, %d grid lines" % (len(ticks), len(grid)))
        ticks = [(p, v) for p, (_, v) in zip(grid, ticks)]
    (p0, v0), (p1, v1) = ticks[0], ticks[-1]
    scale = (p1 - p0) / (math.log10(v1) - math.log10(v0))
    return lambda p: 10 ** (math.log10(v0) + (p - p0) / scale)


def main():
    svg = open(sys.argv[1], encoding="utf-8").read()
    fx, fy = axis(svg, "x-ticks", "x"), axis(svg, "y-ticks", "y")
    roofs = points = 0
    worst = 0.0
    for m in re.finditer(r'<g class="series"><title>roof [^:]+: ([0-9.]+[kKMGTPE]?) B/s × intensity, ([0-9.]+[kKMGTPE]?) FLOP/s</title>\s*'
                         r'<polyline points="([^"]+)"', svg):
        bw, peak = number(m.group(1)), number(m.group(2))
        roofs += 1
        for xy in m.group(3).split():
            x, y = (float(v) for v in xy.split(","))
            want = min(bw * fx(x), peak)
            worst = max(worst, abs(fy(y) - want) / want)
            points += 1
    print("roofs %d, points %d, worst error %s" % (roofs, points, "under 2%" if roofs and worst < 0.02 else "%.1f%%" % (100 * worst)))


if __name__ == "__main__":
    main()
