"""SmartIO's rules (Table 2) over a unit's insights, through the C core's one rules table
(native/src/core/rules.c): the decisions smart mode makes at run time, and for every rule that did not fire, why
(its conditions read an insight that is unknown: not evaluated; or they do not hold: not applicable)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import native, settings
from .insights import Unit

if TYPE_CHECKING:  # the advice's view of files; importing the advise package here would be a cycle
    from ..advise.profile import FileFacts

# the insight each condition of the rules table reads (rules.c's cond_names)
CONDITION_INSIGHTS = {
    "files": ("files",),
    "sequential": ("write_locality", "read_locality"),
    "transfer": ("write_transfer", "read_transfer"),
    "collective_buffering": ("write_transfer", "read_transfer"),
    "transfer_size": ("transfer_size",),
    "file_size": ("file_size",),
    "file_system": ("file_system",),
    "pfl": ("lustre_pfl",),
    "same_calls": ("same_calls",),
}
UNKNOWN = (None, "unknown", "", -1)


@dataclass
class Decision:
    """One unit's decisions: the rules that fired (each with the settings it makes that can apply here, and
    those that cannot, with why), and the rules that did not, with why."""

    unit: Unit
    fired: list[dict] = field(default_factory=list)  # {rule, title, reason, set, usable, not_applicable}
    settings: dict = field(default_factory=dict)  # the core's decision, as it would apply it at run time
    not_fired: list[dict] = field(default_factory=list)  # {rule, title, status, reason}
    error: str | None = None


def _applicable(knob: str, files: list[FileFacts], insights: dict) -> str | None:
    """Why a rule's knob cannot apply to these files (None: it can)."""
    layer = knob.split(".", 1)[0]
    lib = insights.get("library")
    if layer == "hdf5" and (lib in ("mpiio", "pnetcdf") or (files and not any("hdf5" in f.interfaces for f in files))):
        return "the files are not HDF5"
    if layer == "mpiio" and files and not any("mpiio" in f.interfaces for f in files):
        return "the files are not written through MPI-IO"
    if layer == "lustre" and not any((f.file_system or "").lower() == "lustre" for f in files):
        if (insights.get("file_system") or "").lower() != "lustre":
            return "the files are not on Lustre"
    return None


# values an unknown insight is tried at, to tell a rule that needs it from one whose known conditions fail
TRIALS = {
    "files": [{"files": "shared"}, {"files": "per_process"}],
    "sequential": [
        {"write_locality": "sequential", "read_locality": "sequential"},
        {"write_locality": "random", "read_locality": "random"},
    ],
    "transfer": [{"write_transfer": "collective"}, {"write_transfer": "independent"}],
    "collective_buffering": [{"write_transfer": "collective"}, {"write_transfer": "independent"}],
    "transfer_size": [{"transfer_size": 4096}, {"transfer_size": 64 << 20}],
    "file_size": [{"file_size": 1 << 20}, {"file_size": 1 << 40}],
    "file_system": [{"file_system": "lustre"}, {"file_system": "ext4"}],
    "pfl": [{"lustre_pfl": True}, {"lustre_pfl": False}],
    "same_calls": [{"same_calls": True}, {"same_calls": False}],
}


def _unknown(insights: dict) -> list[str]:
    """The rules' conditions whose insights are unknown here."""
    return [c for c, names in CONDITION_INSIGHTS.items() if all(insights.get(n) in UNKNOWN for n in names)]


def _would_fire(core, insights: dict, unknown: list[str]) -> dict[int, list[str]]:
    """Rule id -> the unknown conditions under some value of which it fires (the core decides)."""
    out: dict[int, list[str]] = {}
    for cond in unknown:
        if cond == "collective_buffering" and "transfer" in unknown:
            continue
        for trial in TRIALS.get(cond, []):
            try:
                fired = core.rules_explain({**insights, **trial})["fired"]
            except ValueError:
                continue
            for f in fired:
                if cond not in out.setdefault(f["rule"], []):
                    out[f["rule"]].append(cond)
    return out


def decide(unit: Unit, table: dict | None = None) -> Decision:
    core = native.core()
    table = table or core.rules_table()
    out = Decision(unit)
    try:
        decided = core.rules_explain(unit.insights)
    except ValueError as e:  # insights the core refuses: say so, never crash
        out.error = str(e)
        return out
    out.settings = decided["settings"]
    typed = settings.flatten(decided["document"])  # the decisions as settings values (the rules give text)
    for fired in decided["fired"]:
        sets = {k: typed.get(k, v) for k, v in (fired.get("set") or {}).items() if k in typed}
        usable, na = {}, {}
        for knob, value in sets.items():
            why = _applicable(knob, unit.files, unit.insights)
            if why:
                na[knob] = why
            else:
                usable[knob] = value
        for knob in fired.get("not_set") or {}:  # the core's own: a knob of another library
            said = re.search(r"\(([^)]*)\)", fired.get("reason", "").split("Not set: ", 1)[-1])
            na.setdefault(knob, said.group(1) if said else "not this file's library")
        out.fired.append({**fired, "set": sets, "usable": usable, "not_applicable": na})
    done = {f["rule"] for f in decided["fired"]}
    unknown = _unknown(unit.insights)
    would = _would_fire(core, unit.insights, unknown) if unknown else {}
    for rule in table["rules"]:
        if rule["id"] in done:
            continue
        needs = would.get(rule["id"])
        if needs:
            said = {c: unit.sources.get(CONDITION_INSIGHTS[c][0]) or unit.sources.get("*") for c in needs}
            srcs = "; ".join(f"{c} is unknown ({said[c] or 'not in the input'})" for c in needs)
            out.not_fired.append(
                {"rule": rule["id"], "title": rule["title"], "status": "not evaluated", "reason": srcs}
            )
        else:
            out.not_fired.append(
                {
                    "rule": rule["id"],
                    "title": rule["title"],
                    "status": "not applicable",
                    "reason": "its conditions do not hold: "
                    + " or ".join(
                        ", ".join(f"{k} {json.dumps(v)}" for k, v in c.get("when", {}).items()) or "always"
                        for c in rule.get("cases", [])
                    ),
                }
            )
    return out


def decide_all(units: list[Unit]) -> list[Decision]:
    table = native.core().rules_table()
    return [decide(u, table) for u in units]
