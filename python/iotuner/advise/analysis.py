"""`iotuner advise`: from a Darshan log or a run report to findings, SmartIO's
decisions and an applicable settings document."""

from __future__ import annotations

import time
from pathlib import Path

from .. import __version__, inputs
from ..perfmodel.calibration import Calibration, CalibrationError
from ..recommend import reconcile
from ..recommend.insights import tuned_files
from ..run_report import KIND as REPORT_KIND
from ..run_report import ReportError, parse
from . import checks, darshan_log, from_darshan, from_report
from .errors import EXIT_HIGH, EXIT_OK, InputError
from .profile import Profile

KIND = "iotuner-advice"
VERSION = 1


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


def advise(path: str | Path, overrides: dict | None = None, nodes: int | None = None, calibration=None) -> dict:
    """The advice document (see docs/advise.md); calibration: a file, or None for this machine's."""
    started = time.monotonic()
    th = checks.thresholds(overrides)
    advice = advise_profile(load(path, nodes), th, str(path), calibration=calibration)
    advice["elapsed_s"] = round(time.monotonic() - started, 3)
    return advice


def calibration_problem(path) -> str | None:
    """Why a calibration file named by the user cannot price the model, or None. This machine's own file is
    optional (the model then says why it was not evaluated); a file asked for by name must be good."""
    try:
        Calibration.load(path)
    except CalibrationError as e:
        return str(e)
    return None


def advise_profile(profile: Profile, th: dict, path: str, calibration=None, use_model: bool = True) -> dict:
    """The advice on a profile, with these thresholds (checks.thresholds): the recommendation engine's answer
    (iotuner.recommend), as advise prints and writes it."""
    found = reconcile.recommend(profile, th, str(path), calibration=calibration, use_model=use_model)
    findings = found["findings"]
    chains = [
        {
            "identity": u["identity"],
            "opened": u["opened"],
            "phases": u["phases"],
            "files": [f.path for f in unit_files.get(u["identity"], [])][:20],
            "file_count": len(unit_files.get(u["identity"], [])),
            "insights": u["insights"],
            "sources": u["sources"],
            "rule_inputs": u["rule_inputs"],
            "fired": u["fired"],
            "settings": u["settings"],
            "not_fired": u["not_fired"],
            **({"error": u["error"]} if "error" in u else {}),
        }
        for unit_files in [tuned_files(profile)]
        for u in found["units"]
    ]
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
        "not_evaluated": found["not_evaluated"],
        "smartio": chains,
        "fixes": found["fixes"],
        "code_changes": found["code_changes"],
        "model": found["model"],
        "recommendations": found["recommendations"],
        "not_applied": found["not_applied"],
        "exit_code": EXIT_HIGH if summary["high"] else EXIT_OK,
    }
