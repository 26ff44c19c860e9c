"""`iotuner advise`: from a Darshan log or a run report to findings, SmartIO's
decisions and an applicable settings document."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import __version__, inputs, native
from ..run_report import KIND as REPORT_KIND
from ..run_report import ReportError, parse
from . import checks, darshan_log, fixes, from_darshan, from_report, smartio
from .errors import EXIT_HIGH, EXIT_OK, InputError
from .profile import Profile

KIND = "iotuner-advice"
VERSION = 1
LEVEL_ORDER = {lvl: i for i, lvl in enumerate(checks.LEVELS)}


def load(path: str | Path, nodes: int | None = None) -> Profile:
    """A Profile of a Darshan log or an iotuner run report; InputError names what is wrong."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path} does not exist")
    try:
        inputs.regular_file(path, "a Darshan log or a run report")  # a FIFO is refused before anything reads it
    except inputs.InputError as e:
        raise InputError(str(e)) from None
    if darshan_log.looks_like_darshan(path) or path.suffix == ".darshan":
        profile = from_darshan.build(darshan_log.read(path), str(path))
    else:
        try:
            data = inputs.read_json(path, "a Darshan log or a run report")
        except inputs.InputError as e:
            raise InputError(str(e)) from None
        if isinstance(data, dict) and data.get("kind") == KIND:
            raise InputError(
                f"{path} is advice already (iotuner advise --json); give the log or run report "
                f"it came from, or render it with 'iotuner report'"
            )
        if not isinstance(data, dict) or data.get("kind") != REPORT_KIND:
            raise InputError(f'{path} is JSON but not an iotuner run report (no "kind": "{REPORT_KIND}")')
        try:
            profile = from_report.build(parse(data, str(path)), str(path))
        except ReportError as e:
            raise InputError(str(e)) from None
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"run report {path} is malformed: {e.__class__.__name__}: {e}") from None
    if nodes:
        profile.job.nodes, profile.job.nodes_from = nodes, "--nodes"
    return profile


def _scope(paths: list[str], profile: Profile) -> list[str] | None:
    """The file globs a finding is about (None: the whole job)."""
    by_path = {f.path: f for f in profile.files}
    globs = sorted({checks._glob(by_path[p]) for p in paths if p in by_path})
    return globs or None


def _finding(check: checks.Check, hit: checks.Hit, profile: Profile) -> dict:
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
        "thresholds": {t: None for t in check.thresholds},
    }


def _rule_finding(rule: dict, hit: checks.Hit) -> dict:
    ev = hit.evidence
    sets = ", ".join(f"{k}={json.dumps(v)}" for k, v in hit.knobs.items())
    na = ev.get("not_applicable")
    message = f"{Path(ev['identity']).name}: {ev.get('reason') or rule['title']}" + (
        f" -> {sets}"
        if sets
        else " -> not applicable: " + "; ".join(f"{k} ({w})" for k, w in na.items())
        if na
        else " -> keep the default"
    )
    return {
        "code": f"smartio-{rule['id']}",
        "level": hit.level,
        "title": f"SmartIO rule {rule['id']}: {rule['title']}",
        "message": message,
        "evidence": ev,
        "files": hit.files,
        "recommendation": rule["title"],
        "knobs": hit.knobs,
        "knob_files": hit.knob_files,
        "keeps": [],
        "scope": hit.knob_files,
        "code_change": None,
        "source": f"SmartIO Table 2, rule {rule['id']} ({rule.get('source', '')}); the C core's rules table",
        "thresholds": {},
    }


def advise(path: str | Path, overrides: dict | None = None, nodes: int | None = None) -> dict:
    """The advice document (see docs/advise.md)."""
    started = time.monotonic()
    th = checks.thresholds(overrides)
    advice = advise_profile(load(path, nodes), th, str(path))
    advice["elapsed_s"] = round(time.monotonic() - started, 3)
    return advice


def advise_profile(profile: Profile, th: dict, path: str) -> dict:
    """The advice on a profile, with these thresholds (checks.thresholds)."""
    findings, not_evaluated = [], []
    for check in checks.CHECKS:
        try:
            hits = check.test(profile, th)
        except checks.NotEvaluated as e:
            not_evaluated.append({"code": check.code, "reason": str(e)})
            continue
        for hit in hits:
            f = _finding(check, hit, profile)
            f["thresholds"] = {t: th[t] for t in check.thresholds}
            findings.append(f)
    chains, rule_hits = smartio.analyse(profile)
    rules = {r["id"]: r for r in native.core().rules_table()["rules"]}
    for rule_id in sorted(rule_hits):
        for hit in rule_hits[rule_id]:
            findings.append(_rule_finding(rules[rule_id], hit))
    findings.sort(key=lambda f: LEVEL_ORDER[f["level"]])
    doc, knob_list, conflicts, code_changes = fixes.build(profile, findings, str(path))
    for c in conflicts:  # a finding whose fix lost says so beside it
        for f in findings:
            if f["code"] == c["dropped_from"] and c["knob"] in (f.get("knobs") or {}):
                f.setdefault("left_out", {})[c["knob"]] = c["why"]
    summary = {lvl: sum(1 for f in findings if f["level"] == lvl) for lvl in checks.LEVELS}
    job = profile.job
    return {
        "kind": KIND,
        "version": VERSION,
        "iotuner": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "input": {"path": str(path), "type": job.source, "format_version": job.log_version, "dxt": job.has_dxt},
        "job": {
            "processes": job.processes,
            "nodes": job.nodes,
            "nodes_from": job.nodes_from,
            "runtime_s": job.runtime_s,
            "executable": job.executable,
            "jobid": job.jobid,
            "modules": job.modules,
            "files": len(profile.files),
            "files_with_data": len(profile.data_files()),
            "notes": job.notes,
        },
        "thresholds": th,
        "summary": summary,
        "findings": findings,
        "not_evaluated": not_evaluated,
        "smartio": chains,
        "fixes": {"document": doc, "knobs": knob_list, "conflicts": conflicts},
        "code_changes": code_changes,
        "exit_code": EXIT_HIGH if summary["high"] else EXIT_OK,
    }
