"""Drishti-style findings: the checks' table (advise/checks.py) and SmartIO's rule decisions, each a finding
with a code, a level, the evidence, the files and the knobs that address it; and what was not evaluated."""

from __future__ import annotations

import json
from pathlib import Path

from ..advise import checks
from ..advise.profile import Profile
from .rules import Decision

LEVEL_ORDER = {lvl: i for i, lvl in enumerate(checks.LEVELS)}


def _scope(paths: list[str], profile: Profile) -> list[str] | None:
    """The file globs a finding is about (None: the whole job)."""
    by_path = {f.path: f for f in profile.files}
    globs = sorted({checks._glob(by_path[p]) for p in paths if p in by_path})
    return globs or None


def _finding(check: checks.Check, hit: checks.Hit, profile: Profile, th: dict) -> dict:
    message = hit.message
    if message is None:
        try:
            message = check.message.format(**hit.evidence)
        except (KeyError, ValueError, IndexError):
            message = check.title
    below = hit.evidence.get("count_floor")
    if below:
        message += (
            f" (only {below['requests']:,} requests, below the count floor high_min_requests = "
            f"{below['high_min_requests']:,}: info, not {check.level})"
        )
    return {
        "code": check.code,
        "level": hit.level or check.level,
        "title": check.title,
        "message": message,
        "evidence": hit.evidence,
        "files": hit.files,
        "recommendation": hit.recommendation or check.recommendation,
        "knobs": hit.knobs,
        "knob_files": hit.knob_files,
        "keeps": [list(k) for k in check.keeps],
        "scope": hit.knob_files or _scope(hit.files, profile),
        "code_change": check.code_change,
        "source": check.source,
        "thresholds": {t: th[t] for t in check.thresholds},
    }


def of_checks(profile: Profile, th: dict) -> tuple[list[dict], list[dict]]:
    """(findings, checks not evaluated with why)."""
    findings, not_evaluated = [], []
    for check in checks.CHECKS:
        try:
            hits = check.test(profile, th)
        except checks.NotEvaluated as e:
            not_evaluated.append({"code": check.code, "reason": str(e)})
            continue
        findings.extend(_finding(check, hit, profile, th) for hit in hits)
    return findings, not_evaluated


def _glob(d: Decision) -> list[str]:
    if d.unit.files:
        return [checks._glob(d.unit.files[0])]
    return [(d.unit.identity.rsplit("/", 1)[-1]).replace("#", "*") or "*"]


def of_rules(decisions: list[Decision], rules: dict[int, dict]) -> list[dict]:
    """A finding per rule that fired per unit, in the order of the rules table."""
    out = []
    seen: dict[tuple, dict] = {}
    for d in decisions:
        for fired in d.fired:
            rule = rules[fired["rule"]]
            same = (fired["rule"], d.unit.identity, json.dumps(fired["usable"], sort_keys=True), fired.get("reason"))
            if same in seen:  # the same decision for another phase of the file (written, then read back)
                seen[same]["evidence"].setdefault("also_opened", []).append(d.unit.opened)
                continue
            usable, na = fired["usable"], fired["not_applicable"]
            ev = {"identity": d.unit.identity, "reason": fired.get("reason"), "insights": d.unit.insights}
            if d.unit.opened:
                ev["opened"] = d.unit.opened
            if fired["set"] and not usable:
                ev["not_applicable"] = {k: na[k] for k in fired["set"] if k in na}
            sets = ", ".join(f"{k}={json.dumps(v)}" for k, v in usable.items())
            message = f"{Path(d.unit.identity).name}: {fired.get('reason') or rule['title']}" + (
                f" -> {sets}"
                if sets
                else " -> not applicable: " + "; ".join(f"{k} ({w})" for k, w in ev["not_applicable"].items())
                if ev.get("not_applicable")
                else " -> keep the default"
            )
            seen[same] = {
                "code": f"smartio-{rule['id']}",
                "level": "info" if usable else "ok",
                "title": f"SmartIO rule {rule['id']}: {rule['title']}",
                "message": message,
                "evidence": ev,
                "files": [f.path for f in d.unit.files][:10],
                "recommendation": rule["title"],
                "knobs": usable,
                "knob_files": _glob(d) if usable else None,
                "keeps": [],
                "scope": _glob(d) if usable else None,
                "code_change": None,
                "source": f"SmartIO Table 2, rule {rule['id']} ({rule.get('source', '')}); the C core's rules table",
                "thresholds": {},
            }
            out.append(seen[same])
    out.sort(key=lambda f: int(f["code"].split("-")[1]))
    return out
