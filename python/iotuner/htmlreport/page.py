"""One self-contained HTML page: inline CSS, inline SVG, no external resource.

The page reads without JavaScript. One small inline script only records the
page's measured widths in data attributes of <body> (data-scroll-width,
data-client-width, data-main-table-right, data-title-overflow,
data-broken-badges), so a headless browser test can check that nothing
overflows and no level badge wraps.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from html import escape, unescape

from .. import __version__
from ..render import fmt_bytes

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#ffffff;--soft:#f6f8fa;
--high:#d1242f;--warn:#9a6700;--info:#0969da;--ok:#1a7f37}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1100px;padding:24px 28px 48px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
header{border-bottom:2px solid var(--line);margin-bottom:18px}
h1{font-size:24px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:16px;margin:18px 0 6px}
.sub{color:var(--muted);margin:0 0 12px}
table{border-collapse:collapse;width:100%;table-layout:fixed;margin:8px 0 14px;font-size:13.5px}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top;
overflow-wrap:anywhere;word-break:break-word}
th{background:var(--soft);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
.lvl{display:inline-block;min-width:3.6em;text-align:center;border-radius:10px;padding:0 7px;color:#fff;
font-size:12px;font-weight:600;white-space:nowrap}
.lvl-high{background:var(--high)}.lvl-warn{background:var(--warn)}.lvl-info{background:var(--info)}
.lvl-ok{background:var(--ok)}
.st-applied{color:var(--ok)}.st-changed{color:var(--warn)}.st-dropped,.st-failed,.st-cannot_apply{color:var(--high)}
.st-not_applicable{color:var(--muted)}
.st-not_used{color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:120px;background:var(--soft)}
.card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12.5px}
svg.chart{width:100%;height:auto;display:block;margin:6px 0 14px;background:#fff}
svg .grid{stroke:#eaeef2;stroke-width:1}svg .axis{stroke:#8c959f;stroke-width:1}
svg .tick{font-size:11px;fill:#59636e}svg .label{font-size:12px;fill:#1f2328}
svg .ctitle{font-size:13px;font-weight:600;fill:#1f2328}
.note{color:var(--muted);font-size:13px}
details{margin:4px 0}summary{cursor:pointer;color:var(--info)}
footer{margin-top:36px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
ul.ev{margin:2px 0 2px 18px;padding:0}
@media (max-width:640px){
body{padding:16px 12px 32px}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
table.stack colgroup,table.stack thead{display:none}
table.stack tr{border-bottom:1px solid var(--line);padding:6px 0}
table.stack td{border:0;padding:1px 4px;text-align:left}
table.stack td[data-label]::before{content:attr(data-label);display:inline-block;width:38%;vertical-align:top;
color:var(--muted);font-size:12px;padding-right:8px;overflow-wrap:normal;word-break:normal}
}
"""

MEASURE = """<script>
(function(){var d=document.documentElement,b=document.body,t=document.getElementById('main-table'),
h=document.querySelector('h1'),broken=0;
b.setAttribute('data-scroll-width',d.scrollWidth);b.setAttribute('data-client-width',d.clientWidth);
if(t){var r=t.getBoundingClientRect();b.setAttribute('data-main-table-right',Math.ceil(r.right));
b.setAttribute('data-main-table-width',Math.ceil(r.width));}
if(h){b.setAttribute('data-title-overflow',h.scrollWidth>h.clientWidth?1:0);}
var narrow=0,over=0;document.querySelectorAll('table').forEach(function(x){
if(x.getBoundingClientRect().right>d.clientWidth+1)over++;
x.querySelectorAll('td,th').forEach(function(c){var w=c.getBoundingClientRect().width;
if(c.textContent.trim().length>3&&w>0&&w<48)narrow++;});});
b.setAttribute('data-narrow-cells',narrow);b.setAttribute('data-tables-overflowing',over);
document.querySelectorAll('.lvl').forEach(function(x){var r=x.getBoundingClientRect(),p=x.parentElement.getBoundingClientRect();
if(r.height>1.6*parseFloat(getComputedStyle(x).lineHeight)||r.right>p.right+1)broken++;});
b.setAttribute('data-broken-badges',broken);b.setAttribute('data-measured','1');})();
</script>"""


def e(v: object) -> str:
    return escape("" if v is None else str(v))


BYTE_KEYS = re.compile(r"(^|_)bytes($|_)|_size$|alignment$|offset$")  # evidence and insight keys that are bytes


def value(key: str, v: object) -> str:
    """A value of evidence, insights or statistics as text: byte counts in binary units with the exact
    number, yes / no for booleans, four significant digits for fractions."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) and BYTE_KEYS.search(key):
        return f"{fmt_bytes(v)} ({v:,} bytes)" if abs(v) >= 1024 else f"{v} bytes"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return "" if v is None else str(v)


def table(
    headers: Iterable[str],
    rows: Iterable[Iterable[str]],
    *,
    main: bool = False,
    num: set[int] = frozenset(),
    widths: list[str] | None = None,
    cls: str = "",
) -> str:
    """Cells are HTML already (escape text with e())."""
    headers = list(headers)
    cols = "".join(f'<col style="width:{w}">' for w in widths) if widths else ""
    head = "".join(f'<th class="num">{h}</th>' if i in num else f"<th>{h}</th>" for i, h in enumerate(headers))
    # on a narrow screen a table of many columns shows a row as a block of "header: value" lines
    # (table.stack in CSS), rather than columns a few characters wide that break every number
    stack = len(headers) > 3
    labels = [f' data-label="{escape(unescape(re.sub(r"<[^>]+>", "", h)))}"' if stack and h else "" for h in headers]
    label = lambda i: labels[i] if i < len(labels) else ""  # noqa: E731
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num"{label(i)}>{c}</td>' if i in num else f"<td{label(i)}>{c}</td>" for i, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    ident = ' id="main-table"' if main else ""
    cls = " ".join(x for x in (cls, "stack" if stack else "") if x)
    return f'<table{ident} class="{cls}"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def cards(items: Iterable[tuple[str, str]]) -> str:
    """Tiles of (label, value), both plain text."""
    return (
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{e(v)}</b><span>{e(k)}</span></div>' for k, v in items)
        + "</div>"
    )


def level(lvl: str) -> str:
    return f'<span class="lvl lvl-{e(lvl)}">{e(lvl)}</span>'


def document(title: str, subtitle: str, body: str, kind: str) -> str:
    created = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="iotuner {e(__version__)}"><title>{e(title)}</title>'
        f'<style>{CSS}</style></head><body data-report-kind="{e(kind)}">'
        f'<header><h1>{e(title)}</h1><p class="sub">{subtitle}</p></header>{body}'
        f"<footer>iotuner {e(__version__)} &middot; generated {created} &middot; one self-contained file: "
        f"no scripts or resources from the network</footer>{MEASURE}</body></html>\n"
    )


def fired_rules(fired: list[dict]) -> str:
    """SmartIO's fired rules as a table: the rule, why it fired, what it sets (run pages and advice pages)."""
    return table(
        ["rule", "why", "sets"],
        [
            [
                f"{r.get('rule')}: {e(r.get('title', ''))}",
                e(r.get("reason", "")),
                e(", ".join(f"{k}={v}" for k, v in (r.get("set") or {}).items()) or "nothing"),
            ]
            for r in fired
        ],
        widths=["35%", "40%", "25%"],
    )
