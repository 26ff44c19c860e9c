"""Hand-built inline SVG charts: no JavaScript, no fonts to fetch, small.

A chart is drawn into a fixed viewBox and scales with the page (width 100%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7ea4", "#6e7781")


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not math.isfinite(lo) or not math.isfinite(hi):
        return [0.0]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, t = [start], start
    while t < hi - step * 1e-9:  # the last tick covers hi
        t += step
        ticks.append(round(t, 12))
    return ticks


def fmt_num(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    if a >= 100 or v == int(v):
        return f"{v:.0f}"
    return f"{v:.3g}"


def time_unit(max_s: float) -> tuple[str, float]:
    """A unit that fits a duration: (name, seconds per unit)."""
    if max_s < 2:
        return "ms", 1e-3
    if max_s < 180:
        return "s", 1.0
    if max_s < 3 * 3600:
        return "min", 60.0
    return "h", 3600.0


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    kind: str = "points"  # points, step, line
    color: str | None = None
    dashed: bool = False


@dataclass
class XYChart:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    hlines: list[tuple[str, float, str, tuple[float, float] | None]] = field(
        default_factory=list
    )  # label, y, color, band
    vlines: list[tuple[str, float, str]] = field(default_factory=list)  # label, x, color
    width: int = 760
    height: int = 320
    y_from_zero: bool = True

    def render(self) -> str:
        W, H, L, R, T, B = self.width, self.height, 64, 16, 34, 84
        xs = [x for s in self.series for x, _ in s.points] + [x for _, x, _ in self.vlines]
        ys = (
            [y for s in self.series for _, y in s.points]
            + [y for _, y, _, _ in self.hlines]
            + [v for _, _, _, band in self.hlines if band for v in band]
        )
        if not xs or not ys:
            return (
                f'<svg viewBox="0 0 {W} 60" role="img"><text x="10" y="30">{escape(self.title)}: no data</text></svg>'
            )
        x0, x1 = min(xs), max(xs)
        y0, y1 = (min(0.0, min(ys)) if self.y_from_zero else min(ys)), max(ys)
        xt, yt = nice_ticks(x0, x1), nice_ticks(y0, y1 * 1.05 if y1 > 0 else y1 + 1)
        x0, x1, y0, y1 = min(xt[0], x0), max(xt[-1], x1), yt[0], yt[-1]
        sx = lambda x: L + (x - x0) / ((x1 - x0) or 1) * (W - L - R)  # noqa: E731
        sy = lambda y: H - B - (y - y0) / ((y1 - y0) or 1) * (H - T - B)  # noqa: E731
        out = [
            f'<svg viewBox="0 0 {W} {H}" role="img" aria-label="{escape(self.title)}" class="chart">',
            f'<text x="{L}" y="18" class="ctitle">{escape(self.title)}</text>',
        ]
        for t in yt:
            out.append(
                f'<line x1="{L}" x2="{W - R}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="grid"/>'
                f'<text x="{L - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" class="tick">{fmt_num(t)}</text>'
            )
        for t in xt:
            out.append(
                f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{T}" y2="{H - B}" class="grid"/>'
                f'<text x="{sx(t):.1f}" y="{H - B + 16}" text-anchor="middle" class="tick">{fmt_num(t)}</text>'
            )
        out.append(
            f'<line x1="{L}" x2="{W - R}" y1="{H - B}" y2="{H - B}" class="axis"/>'
            f'<line x1="{L}" x2="{L}" y1="{T}" y2="{H - B}" class="axis"/>'
        )
        out.append(
            f'<text x="{(L + W - R) / 2:.0f}" y="{H - B + 34}" text-anchor="middle" class="label">'
            f"{escape(self.xlabel)}</text>"
        )
        out.append(
            f'<text transform="translate(14,{(T + H - B) / 2:.0f}) rotate(-90)" text-anchor="middle" '
            f'class="label">{escape(self.ylabel)}</text>'
        )
        legend = []
        for label, y, color, band in self.hlines:
            if band:
                out.append(
                    f'<rect x="{L}" width="{W - L - R}" y="{sy(band[1]):.1f}" '
                    f'height="{max(1.0, sy(band[0]) - sy(band[1])):.1f}" fill="{color}" opacity="0.12"/>'
                )
            out.append(
                f'<line x1="{L}" x2="{W - R}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="{color}" '
                f'stroke-dasharray="6 4" stroke-width="1.5"/>'
            )
            legend.append((label, color, "dash"))
        for label, x, color in self.vlines:
            out.append(
                f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{T}" y2="{H - B}" stroke="{color}" '
                f'stroke-dasharray="2 3"/>'
            )
            legend.append((label, color, "dot"))
        for i, s in enumerate(self.series):
            color = s.color or PALETTE[i % len(PALETTE)]
            pts = sorted(s.points) if s.kind != "points" else s.points
            if s.kind in ("step", "line") and pts:
                d = [f"M{sx(pts[0][0]):.1f},{sy(pts[0][1]):.1f}"]
                for _, (xb, yb) in zip(pts, pts[1:]):
                    if s.kind == "step":
                        d.append(f"H{sx(xb):.1f}V{sy(yb):.1f}")
                    else:
                        d.append(f"L{sx(xb):.1f},{sy(yb):.1f}")
                dash = ' stroke-dasharray="5 3"' if s.dashed else ""
                out.append(f'<path d="{"".join(d)}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            else:
                out.extend(
                    f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.2" fill="{color}" opacity="0.8">'
                    f"<title>{escape(s.label)}: {fmt_num(x)}, {fmt_num(y)}</title></circle>"
                    for x, y in pts
                )
            legend.append((s.label, color, "line" if s.kind != "points" else "dot"))
        lx, ly = L, H - 30
        for label, color, mark in legend:
            w = 18 + 6.4 * len(label) + 18
            if lx + w > W - R and lx > L:  # wrap to a second line
                lx, ly = L, ly + 18
            sym = (
                f'<circle cx="{lx + 5}" cy="{ly - 4}" r="4" fill="{color}"/>'
                if mark == "dot"
                else f'<line x1="{lx}" x2="{lx + 14}" y1="{ly - 4}" y2="{ly - 4}" stroke="{color}" stroke-width="2"'
                + (' stroke-dasharray="4 3"' if mark == "dash" else "")
                + "/>"
            )
            out.append(sym + f'<text x="{lx + 18}" y="{ly}" class="tick">{escape(label)}</text>')
            lx += w
        out.append("</svg>")
        return "".join(out)


def hbars(title: str, rows: list[tuple[str, float, str]], unit: str = "", width: int = 760) -> str:
    """Horizontal bars: (label, value, note)."""
    if not rows:
        return ""
    bar_h, gap, L, R = 18, 6, 230, 90
    H = 30 + len(rows) * (bar_h + gap) + 10
    vmax = max(v for _, v, _ in rows) or 1
    out = [
        f'<svg viewBox="0 0 {width} {H}" role="img" aria-label="{escape(title)}" class="chart">',
        f'<text x="8" y="18" class="ctitle">{escape(title)}</text>',
    ]
    for i, (label, v, note) in enumerate(rows):
        y = 30 + i * (bar_h + gap)
        w = max(1.0, v / vmax * (width - L - R))
        short = label if len(label) <= 36 else "…" + label[-35:]
        out.append(
            f'<text x="{L - 6}" y="{y + 13}" text-anchor="end" class="tick">{escape(short)}</text>'
            f'<rect x="{L}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{PALETTE[0]}" opacity="0.85">'
            f"<title>{escape(label)}: {fmt_num(v)} {escape(unit)}</title></rect>"
            f'<text x="{L + w + 4:.1f}" y="{y + 13}" class="tick">{escape(note or fmt_num(v) + " " + unit)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def timeline(
    title: str, rows: list[str], bars: list[tuple[int, float, float, str, str]], xlabel: str, width: int = 760
) -> str:
    """Gantt-like: rows (labels) and bars (row, start, end, color, tooltip), times in seconds."""
    if not bars:
        return ""
    bar_h, gap, L, R, T = 16, 8, 200, 20, 30
    H = T + len(rows) * (bar_h + gap) + 44
    t1 = max(e for _, _, e, _, _ in bars) or 1e-9
    unit, per = time_unit(t1)
    ticks = nice_ticks(0, t1 / per)
    span = ticks[-1] * per or t1
    sx = lambda t: L + t / span * (width - L - R)  # noqa: E731
    out = [
        f'<svg viewBox="0 0 {width} {H}" role="img" aria-label="{escape(title)}" class="chart">',
        f'<text x="8" y="18" class="ctitle">{escape(title)}</text>',
    ]
    base = T + len(rows) * (bar_h + gap)
    for t in ticks:
        x = sx(t * per)
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{T}" y2="{base}" class="grid"/>'
            f'<text x="{x:.1f}" y="{base + 14}" text-anchor="middle" class="tick">{fmt_num(t)}</text>'
        )
    for i, label in enumerate(rows):
        y = T + i * (bar_h + gap)
        short = label if len(label) <= 30 else "…" + label[-29:]
        out.append(f'<text x="{L - 6}" y="{y + 12}" text-anchor="end" class="tick">{escape(short)}</text>')
    for row, start, end, color, tip in bars:
        y = T + row * (bar_h + gap)
        out.append(
            f'<rect x="{sx(start):.1f}" y="{y}" width="{max(1.5, sx(end) - sx(start)):.1f}" height="{bar_h}" '
            f'fill="{color}"><title>{escape(tip)}</title></rect>'
        )
    out.append(
        f'<text x="{(L + width - R) / 2:.0f}" y="{base + 32}" text-anchor="middle" class="label">'
        f"{escape(xlabel)} ({unit})</text></svg>"
    )
    return "".join(out)


def color_scale(v: float, lo: float, hi: float) -> str:
    """Slow (red) to fast (green) for bandwidth bars."""
    if hi <= lo:
        return PALETTE[0]
    f = max(0.0, min(1.0, (v - lo) / (hi - lo)))
    r, g = int(209 - f * (209 - 26)), int(36 + f * (127 - 36))
    return f"#{r:02x}{g:02x}{55:02x}"
