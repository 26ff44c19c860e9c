"""The recommendation engine: one run (a run report or a Darshan log) to ranked recommendations.

1. Insights: one extraction (insights.py), the same for advise, smart and auto.
2. Findings: Drishti's checks (advise/checks.py) and SmartIO's rules (rules.py, the C core's table), each with
   its evidence; the rules that did not fire say why.
3. Candidates: the advice as a whole (the findings' knobs reconciled by fixes.build: a higher-ranked finding
   wins a knob, and a fix never undoes a higher one), the rules' settings together and each rule alone, and the
   performance model's best points.
4. Reconciliation: candidates with the same settings are one, their evidence joined. The model, when it can be
   evaluated and predicting a gain somewhere, predicts each one's effect and they rank by it; without it, or
   when it predicts no gain anywhere (its differences are then below what it resolves), the advice ranks
   first, then the rules. Confidence: high when the model predicts a gain for settings a rule or check also recommends,
   medium when only one of them does, low when the model predicts no gain for what a rule recommends.

Each recommendation carries its settings, the settings document to apply (the run's own settings, then the
recommendation's), its predicted effect (or why there is none), its confidence and its evidence.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .. import native, settings
from ..advise import checks, fixes, from_report
from ..advise.profile import Profile
from ..catalogue import LAYERS
from ..run_report import ReportError, parse
from . import findings as findings_of
from . import insights, layout, ompio, predictions, rules

KIND = "iotuner-recommendations"
GAIN = 1.05  # a predicted effect below this is no gain: the model's counts are not finer than that
# rules that fire to keep knobs at their defaults (their table entry sets nothing): SmartIO's rule 8, data sieving
KEEPS = {8: ("mpiio.romio_ds_write", "mpiio.romio_ds_read")}
CLOSE = 1.1  # predictions within this factor of the best are a tie the rules and checks break
NOT_EVALUATED_IN_PAPER = "SmartIO did not evaluate it (Table 2)"


def _flat_key(flat: dict) -> str:
    return json.dumps(sorted((k, json.dumps(v)) for k, v in flat.items()))


def document(profile: Profile, groups: list[tuple[str | None, dict]], description: str, meta: dict) -> dict:
    """A settings document: the run's own settings (a run report's), then these (file glob or None, flat
    settings) groups, which override them knob by knob."""
    base = profile.job.settings_document
    try:
        doc: dict[str, Any] = settings.validate(base) if base else {"version": settings.VERSION}
    except settings.SettingsError:
        base, doc = None, {"version": settings.VERSION}
    out_groups = list(doc.get("groups", []))
    for glob, flat in groups:  # glob: a file glob, None (every file) or a {"file", "dataset"} group's head
        g: dict[str, Any] = dict(glob) if isinstance(glob, dict) else {"file": glob} if glob else {}
        for key, value in settings.complete(flat, profile.job.nodes or 1).items():
            layer, _, name = key.partition(".")
            if layer in LAYERS:
                g.setdefault(layer, {})[name] = value
        if len(g) > (len(glob) if isinstance(glob, dict) else 1 if glob else 0):
            out_groups.append(g)
    doc["groups"] = out_groups
    doc["description"] = description + (" (on top of the settings of that run)" if base else "")
    doc["meta"] = {**(doc.get("meta") or {}), "recommend": meta}
    try:
        return settings.validate(doc)
    except settings.SettingsError as e:  # a setting the runtime would refuse: keep the run's own, say why
        kept = settings.validate(base) if base else {"version": settings.VERSION}
        kept["meta"] = {"recommend": {**meta, "error": str(e)}}
        return kept


def _phase_glob(profile: Profile, phase: dict) -> str:
    """A report phase's file pattern, as the findings name files."""
    path = str(phase.get("file") or "")
    f = next((f for f in profile.files if f.path == path), None)
    if f is not None:
        return checks._glob(f)
    ident = phase.get("identity")
    return (str(ident) if isinstance(ident, str) else path).rsplit("/", 1)[-1].replace("#", "*") or "*"


class _Candidates:
    def __init__(self):
        self.by_key: dict[str, dict] = {}

    def add(self, title: str, groups: list[tuple[str | None, dict]], evidence: dict, source: str, paper=None):
        flat: dict = {}
        for _, g in groups:
            flat.update(g)
        if not flat:
            return
        key = _flat_key(flat)
        c = self.by_key.get(key)
        if c is None:
            c = self.by_key[key] = {
                "title": title,
                "settings": flat,
                "groups": groups,
                "sources": [],
                "evidence": [],
                "evaluated_in_paper": paper,
            }
        if source not in c["sources"]:
            c["sources"].append(source)
        c["evidence"].append(evidence)
        if paper is not None:
            c["evaluated_in_paper"] = bool(c["evaluated_in_paper"]) or paper


def _confidence(c: dict, effect: float | None, model_ok: bool) -> dict:
    advised = any(s != "model" for s in c["sources"])
    if effect is not None and effect >= GAIN and advised:
        return {"level": "high", "why": "a rule or check recommends it, and the model predicts a gain"}
    if effect is not None and effect >= GAIN:
        return {"level": "medium", "why": "the model predicts a gain; no rule or check recommends it"}
    if model_ok and effect is not None:
        return {"level": "low", "why": f"the model predicts no gain ({effect:.2f}x)"}
    if c.get("evaluated_in_paper") is False:
        return {"level": "low", "why": f"a rule alone, which {NOT_EVALUATED_IN_PAPER}; the model was not evaluated"}
    return {"level": "medium", "why": "recommended by the rules or checks; the model was not evaluated"}


def recommend(
    profile: Profile,
    th: dict | None = None,
    source: str = "",
    *,
    calibration=None,
    objective=None,
    use_model: bool = True,
    prebuilt: predictions.Model | None = None,
    space=None,
    default: dict[str, str] | None = None,
) -> dict:
    """The engine's answer for a profile (advise.load gives one of a report or a Darshan log). A study passes
    its model (`prebuilt`), its search space and its default point: the model's candidates are then the
    space's points it ranks best, each carrying its `point`."""
    th = th or checks.thresholds()
    units = insights.of_profile(profile)
    decisions = rules.decide_all(units)
    table = {r["id"]: r for r in native.core().rules_table()["rules"]}
    found, not_evaluated = findings_of.of_checks(profile, th)
    found += findings_of.of_rules(decisions, table)
    report = profile.report.data if profile.report is not None else None
    nprocs = max([u.insights.get("processes", 1) for u in units] + [profile.job.processes or 1])
    under_ompio = ompio.component(report) == ompio.COMPONENT
    if under_ompio:  # ROMIO's hints would be dropped: OMPIO's counterparts, and OMPIO's own rule
        for f in found:
            ompio.translate_finding(f, profile.job.nodes or 1, nprocs)
        found += ompio.findings(units, lambda u: findings_of._glob(rules.Decision(u))[0])
    chunked, left_alone = layout.findings(report, lambda ph: _phase_glob(profile, ph))
    found += chunked
    found.sort(key=lambda f: findings_of.LEVEL_ORDER[f["level"]])
    doc, knob_list, conflicts, code_changes = fixes.build(profile, found, source)
    for c in conflicts:  # a finding whose fix lost says so beside it
        for f in found:
            if f["code"] == c["dropped_from"] and c["knob"] in (f.get("knobs") or {}):
                f.setdefault("left_out", {})[c["knob"]] = c["why"]

    if prebuilt is not None:
        m = prebuilt
    elif not use_model:
        m = predictions.Model(None, "not evaluated", "the model was not asked for")
    elif report is None:
        m = predictions.Model(
            None, "not evaluated", "a Darshan log has no access pattern the model counts (a run report has)"
        )
    else:
        m = predictions.build(report, calibration, objective, profile.job.nodes or 1)

    cands = _Candidates()
    advice_groups: dict[str | None, dict] = {}
    for k in knob_list:
        advice_groups.setdefault(k["files"], {})[k["knob"]] = k["value"]
    chunk_groups = [
        ({"file": g["file"], "dataset": g["dataset"]}, {"hdf5.chunk_dims": g["hdf5"]["chunk_dims"]})
        for f in chunked
        for g in f["dataset_groups"]
    ]
    cands.add(
        "the advice: every finding's fix, reconciled",
        list(advice_groups.items()) + chunk_groups,
        {"from": "advice", "findings": sorted({k["from"] for k in knob_list})},
        "advice",
    )
    rule_groups: dict[str | None, dict] = {}
    for d in decisions:
        glob = findings_of._glob(d)[0]
        for fired in d.fired:
            usable = fired["usable"]
            if under_ompio:
                usable = ompio.translate(usable, profile.job.nodes or 1, nprocs)[0]
            if not usable:
                continue
            rule_groups.setdefault(glob, {}).update(usable)
            rule = table[fired["rule"]]
            cands.add(
                f"SmartIO rule {rule['id']}: {rule['title']}",
                [(glob, dict(usable))],
                {"from": f"smartio-{rule['id']}", "identity": d.unit.identity, "reason": fired.get("reason")},
                f"smartio-{rule['id']}",
                paper=bool(rule.get("evaluated")),
            )
    cands.add(
        "SmartIO's rules together, as smart mode applies them",
        list(rule_groups.items()),
        {"from": "smartio", "rules": sorted({f["rule"] for d in decisions for f in d.fired if f["usable"]})},
        "smartio",
    )
    hdf5 = any(u.insights.get("library") == "hdf5" for u in units)
    if space is not None:
        best_points = [(flat, point) for flat, point in m.space_points(space, default or {})]
    else:
        best_points = [
            ({k: v for k, v in f.items() if v != "automatic" or k == predictions.predict.TRANSFER}, None)
            for f in m.best_points(hdf5, nprocs)
        ]
    # not in a study yet: there auto's corrected model learns the sieving knobs from its runs (test_auto_learns)
    keeping = (
        set()
        if space is not None
        else {f["rule"] for d in decisions for f in d.fired if not f["set"] and f["rule"] in KEEPS}
    )
    kept = {k for r in keeping for k in KEEPS[r]}
    for i, (flat, point) in enumerate(best_points):
        cands.add(
            f"the performance model's {'best' if i == 0 else f'#{i + 1}'} prediction",
            [(None, flat)],
            {"from": "model", "rank": i + 1},
            "model",
        )
        if point is not None:
            cands.by_key[_flat_key(flat)]["point"] = point
        if chunk_groups and i == 0:  # the model does not price layouts: its best hints, with the chunks too
            cands.add(
                "the performance model's best prediction, with chunks shaped like the writes",
                [(None, flat)] + chunk_groups,
                {"from": "model", "rank": 1},
                "model",
            )
            cands.add(
                "the performance model's best prediction, with chunks shaped like the writes",
                [(None, flat)] + chunk_groups,
                {"from": "chunk-like-writes", "datasets": [g[0]["dataset"] for g in chunk_groups]},
                "chunk-like-writes",
            )
        # what a rule that fired keeps at its default, the model's point keeps too (a rule's evidence where the
        # model's counts see one phase at a time: a sieved write can speed up the read after it)
        trimmed = {k: ("automatic" if k in kept else v) for k, v in flat.items()}
        if trimmed != flat:
            by = ", ".join(f"smartio-{r}" for r in sorted(keeping))
            # a study's point sets every covered knob; advise's lists only what changes
            kflat = trimmed if point is not None else {k: v for k, v in trimmed.items() if v != "automatic"}
            title = f"the performance model's {'best' if i == 0 else f'#{i + 1}'} prediction, keeping what {by} keeps"
            cands.add(
                title, [(None, kflat)], {"from": "model", "rank": i + 1, "kept": sorted(kept & flat.keys())}, "model"
            )
            for r in sorted(keeping):
                cands.add(title, [(None, kflat)], {"from": f"smartio-{r}", "keeps": sorted(kept)}, f"smartio-{r}")
            kept_point = _to_point(space, point, trimmed) if point is not None else None
            if kept_point is not None:
                cands.by_key[_flat_key(kflat)]["point"] = kept_point

    recs = []
    for c in cands.by_key.values():
        effect = m.effect(c["settings"])
        score = m.score(c["settings"])
        predicted = (
            {"effect": round(effect, 3), "io_time_s": round(score[1], 6), "objective": score[0]}
            if effect is not None and score is not None
            else {"effect": None, "why": m.reason}
        )
        if effect is not None and any(isinstance(g, dict) for g, _ in c["groups"]):
            predicted["not_priced"] = ["hdf5.chunk_dims"]  # the layout is not in the model's counts
        if effect is not None and effect >= GAIN and "model" not in c["sources"]:
            c["evidence"].append({"from": "model", "predicted_effect": round(effect, 3)})
        recs.append({**c, "predicted": predicted, "confidence": _confidence(c, effect, m.predictor is not None)})

    effects = [r["predicted"]["effect"] for r in recs if r["predicted"]["effect"] is not None]
    best = max(effects, default=None)

    def rank_key(r):
        """With the model predicting a gain: the gains it predicts within CLOSE of its best first, those with more
        rules and checks behind them first among them (the model's counts are not finer than that); then by the
        effect. Without the model, or with no gain (GAIN) predicted anywhere: the advice, then the rules
        together, then each rule alone (then, with the model, its points), its effect breaking ties."""
        support = sum(1 for s in r["sources"] if s != "model")
        effect = r["predicted"]["effect"]
        if best is not None and best >= GAIN and effect is not None:
            tie = effect >= best / CLOSE and effect >= GAIN
            return (0 if tie else 1, -support if tie else 0, -effect)
        if best is not None and effect is not None:
            # the model predicts no gain anywhere: its differences are below what its counts resolve, so they
            # only break ties among what the advice and the rules say (a strided run priced in microseconds)
            order = 0 if "advice" in r["sources"] else 1 if "smartio" in r["sources"] else 2 if support else 3
            return (1, order, -support, -effect)
        order = 0 if "advice" in r["sources"] else 1 if "smartio" in r["sources"] else 2
        return (2, order, -support)

    recs.sort(key=rank_key)
    for i, r in enumerate(recs):
        r["rank"] = i + 1
        groups = r.pop("groups")
        r["document"] = (
            doc  # the advice's own document: fixes.build's, conflicts resolved
            if "advice" in r["sources"]
            else document(
                profile,
                groups,
                f"iotuner recommendation {i + 1} for {source}: {r['title']}",
                {"input": source, "rank": i + 1, "sources": r["sources"]},
            )
        )

    not_applied = []
    for d in decisions:
        for nf in d.not_fired:
            not_applied.append({"source": f"smartio-{nf['rule']}", "identity": d.unit.identity, **nf})
        for fired in d.fired:
            for knob, why in fired["not_applicable"].items():
                not_applied.append(
                    {
                        "source": f"smartio-{fired['rule']}",
                        "identity": d.unit.identity,
                        "rule": fired["rule"],
                        "status": "not applicable",
                        "reason": f"{knob}: {why}",
                    }
                )
        if d.error:
            not_applied.append({"source": "smartio", "identity": d.unit.identity, "status": "error", "reason": d.error})
    for la in left_alone:
        not_applied.append(
            {"source": "chunk-like-writes", "status": "not applicable", "reason": f"{la['dataset']}: {la['reason']}"}
        )
    for ne in not_evaluated:
        not_applied.append({"source": ne["code"], "status": "not evaluated", "reason": ne["reason"]})
    if m.predictor is None:
        not_applied.append({"source": "model", "status": "not evaluated", "reason": m.reason})

    return {
        "units": [
            {
                "identity": u.identity,
                "opened": u.opened,
                "scope": u.scope,
                "phases": u.phases,
                "insights": u.insights,
                "sources": u.sources,
                "rule_inputs": insights.rule_inputs(u.insights),
                "fired": [{k: f[k] for k in ("rule", "title", "reason", "set", "usable")} for f in d.fired],
                "settings": d.settings,
                "not_fired": d.not_fired,
                **({"error": d.error} if d.error else {}),
            }
            for u, d in zip(units, decisions)
        ],
        "findings": found,
        "not_evaluated": not_evaluated,
        "fixes": {"document": doc, "knobs": knob_list, "conflicts": conflicts},
        "code_changes": code_changes,
        "model": {"status": m.status, "reason": m.reason},
        "recommendations": recs,
        "not_applied": not_applied,
    }


def _to_point(space, default: dict[str, str], flat: dict) -> dict[str, str] | None:
    """Settings as a point of a study's space: each dimension whose knobs they set, at the value that sets
    them so; the others as in `default`. None when they change no dimension (the space lacks them)."""
    point = dict(default)
    for d in space.dimensions:
        if not d.knobs() & flat.keys():
            continue
        match = d.label_setting(flat)
        if match is not None:
            point[d.name] = match
    return point if point != default else None


class First(NamedTuple):
    points: list[tuple[dict[str, str], str]]  # the first proposals, best first, and why
    said: str  # what the engine did, or why it has nothing
    advised: list[dict[str, str]]  # the points the checks and rules recommend (the model aside), best first


def first_points(report: dict | None, space, default: dict[str, str], k: int, prebuilt: predictions.Model) -> First:
    """A study's first proposals: the engine's recommendations on the default's run report as points of the
    space, best first, at most k; what the engine did (or why it has nothing); and every point the checks or
    rules recommend, whatever the model predicts for it (where the model is wrong, they are what to test)."""
    if report is None:
        return First([], "no run report of the default to recommend from", [])
    source = "the default's run report"
    try:
        profile = from_report.build(parse(report, source), source)
    except ReportError as e:
        return First([], str(e), [])
    found = recommend(profile, source=source, prebuilt=prebuilt, space=space, default=default)
    out: list[tuple[dict[str, str], str]] = []
    seen = set()
    advised = []
    for r in found["recommendations"]:
        point = r.get("point") or _to_point(space, default, r["settings"])
        if point is not None and point != default and point not in advised and set(r["sources"]) - {"model"}:
            advised.append(point)
    for r in found["recommendations"]:
        if len(out) == k:
            break
        point = r.get("point") or _to_point(space, default, r["settings"])
        key = tuple(sorted(point.items())) if point else None
        if point is None or key in seen or point == default:
            continue
        seen.add(key)
        effect = r["predicted"].get("effect")
        out.append(
            (
                point,
                f"the engine's recommendation {r['rank']}, {r['title']} ({', '.join(r['sources'])}; "
                + (f"predicted {effect:.2f}x, " if effect is not None else "")
                + f"confidence {r['confidence']['level']})",
            )
        )
    n = len(found["recommendations"])
    return First(out, f"{n} recommendation(s) from {source} (model: {found['model']['reason']})", advised)
