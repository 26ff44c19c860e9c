"""The validation report of a kernel, as text (also written to OUTDIR/validation.txt)."""

from __future__ import annotations

from . import Kernel


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}%"


def _num(x: float) -> str:
    return f"{x:,.0f}"


def render(k: Kernel) -> str:
    d = k.data
    out = [f"kernel: {k.outdir}", f"status: {k.status}" + (f" - {k.reason}" if k.reason else "")]
    if k.status == "fallback":
        out.append("tools use the application itself: " + " ".join(d["application"]["command"] or ["(none given)"]))
    if d.get("sources"):
        fl = sum(s["lines_formatted"] for s in d["sources"])
        kl = sum(s["lines_kernel"] for s in d["sources"])
        out.append(f"sources: {len(d['sources'])} file(s), {kl} of {fl} formatted lines kept")
    fns = d.get("functions") or {}
    if fns:
        out.append(f"functions kept: {', '.join(fns.get('kept', [])) or '-'}")
        out.append(f"functions dropped: {', '.join(fns.get('dropped', [])) or '-'}")
    if d.get("compute"):
        out.append(f"compute of the values written: {d['compute']['why']}")
    for lp in d.get("loops", []):
        state = "reduced" if lp["reduced"] else f"not reduced: {lp['reason']}"
        out.append(f"loop {lp['id']} ({lp['file']}:{lp['line']}): {state}")
    for u in d.get("unsupported", []):
        out.append(f"unsupported: {u['what']} at {u['where']}")
    for b in d.get("blocked_by_markers", []):
        out.append(f"removed by a drop marker although needed: {b}")
    for n in d.get("notes", []):
        out.append(f"note: {n}")
    v = k.validation
    if v.get("phases") is not None:
        out.append("")
        out.append("per phase (bytes written / read, I/O calls at the data level): application | kernel")
        for p in v["phases"]:
            a, kk = p["app"], p["kernel"]
            fa = f"{_num(a['written'])} / {_num(a['read'])}, {a['calls']} calls" if a else "-"
            fk = f"{_num(kk['written'])} / {_num(kk['read'])}, {kk['calls']} calls" if kk else "-"
            index = f"step {p['occurrence']}" if p.get("matched_by") == "step" else f"#{p['occurrence']}"
            out.append(f"  {p['file']} {index} ({p['kind']}): {fa} | {fk}")
        t = v["totals"]
        whole = " (kernel run whole)" if v.get("reduction") else ""
        out.append(
            f"bytes written error{whole}: {_pct(t['written']['error_pct'])}   "
            f"bytes read error: {_pct(t['read']['error_pct'])}"
        )
        out.append(
            f"I/O calls error: {_pct(t['calls']['error_pct'])} "
            f"({_num(t['calls']['app'])} application, {_num(t['calls']['kernel'])} kernel); "
            f"POSIX calls error: {_pct(t['posix_calls']['error_pct'])}"
        )
        red = v.get("reduction")
        if red:
            pr = red["prediction"]
            out.append(
                f"loop reduction to {red['loop_fraction']:g}: loops run 1 in {red['loop_scale']:.4g} "
                f"iterations; kernel figures times each phase's loop factor against the application:"
            )
            out.append(
                f"  bytes written error {_pct(pr['written']['error_pct'])}, bytes read error "
                f"{_pct(pr['read']['error_pct'])}, I/O calls error {_pct(pr['calls']['error_pct'])}, "
                f"POSIX calls error {_pct(pr['posix_calls']['error_pct'])}"
            )
            out.append(f"  scale (application bytes per reduced-kernel byte, measured): {v['scale']:.4g}")
        cl = v.get("console_lines", {})
        out.append(
            f"console output lines (logging, not counted as I/O): application {cl.get('app')}, "
            f"kernel {cl.get('kernel')}"
        )
    red = v.get("reduction") or {}
    if red.get("kernel_whole", {}).get("median_s"):
        out.append(
            f"kernel run whole: {red['kernel_whole']['median_s']:.3f} s, "
            f"{red['speedup_whole']:.1f}x faster than the application"
        )
    if v.get("app") and v.get("kernel") and v["kernel"].get("median_s"):
        n = len(v["app"]["elapsed_s"])
        out.append(
            f"one evaluation ({'median of ' + str(n) + ' runs' if n > 1 else 'one run'}): application "
            f"{v['app']['median_s']:.3f} s, kernel {v['kernel']['median_s']:.3f} s"
            + (f", {_speedup(v)}" if v.get("speedup") else "")
        )
    return "\n".join(out) + "\n"


def _speedup(v: dict) -> str:
    """The kernel's speed-up as measured: over interleaved pairs of runs, with their range; from one pair,
    said to be one."""
    pairs = v.get("speedup_pairs") or []
    if len(pairs) > 1:
        return (
            f"{v['speedup']:.1f}x faster (median of {len(pairs)} interleaved pairs of runs, "
            f"{min(pairs):.1f}-{max(pairs):.1f}x)"
        )
    return f"{v['speedup']:.1f}x faster in one pair of runs (no spread measured: --repeats 3 measures one)"


def print_summary(k: Kernel) -> None:
    print(render(k), end="")
