"""`iotuner tune`'s lines while it runs: one a trial, one a confirmation round.

A trial's line names only the knobs that differ from the default settings (all with --verbose), as many
as fit the width after the progress bracket; the rest are counted ("+3"), and trials.csv has them all.
The line is never wrapped by the printer: the bracket stays whole and the line stays one line.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.text import Text

from .. import catalogue, settings
from ..render import indented
from . import printout
from .space import library_default
from .study.records import DEFAULT as SAME_AS_DEFAULT

QUIET, NORMAL, VERBOSE = 0, 1, 2


def short_names(keys) -> dict[str, str]:
    """layer.knob -> knob, where no other layer has a knob of that name."""
    layers_of: dict[str, set[str]] = {}
    for key in catalogue.knobs():
        layer, _, name = key.partition(".")
        layers_of.setdefault(name, set()).add(layer)
    out = {}
    for key in keys:
        name = key.partition(".")[2]
        out[key] = name if len(layers_of.get(name, ())) <= 1 else key
    return out


def _size(n: int) -> str:
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def value_text(key: str, value: Any) -> str:
    """A knob's value as a settings document accepts it, short: 16M for 16777216, 0,1M for [0, 1048576]."""
    k = catalogue.knobs().get(key)
    kind = k.type if k else None
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "size" and isinstance(value, int):
        return _size(value)
    if kind == "size_pair" and isinstance(value, (list, tuple)):
        return ",".join(_size(v) if isinstance(v, int) else str(v) for v in value)
    if isinstance(value, str):
        return value if value and " " not in value else json.dumps(value)
    return json.dumps(value, separators=(",", ":"))


def differing(settings: dict, default: dict) -> dict:
    """The knobs whose value is not the default settings' (the baseline's, else the library's documented
    default; a knob whose default the library decides, such as cb_nodes, always differs)."""

    out = {}
    for key, value in settings.items():
        base = default[key] if key in default else library_default(key)
        if base is None or _normal(base) != _normal(value):
            out[key] = value
    return out


def _normal(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def fit_knobs(pairs: list[str], room: int) -> str:
    """Those of pairs that fit in room columns, in order (a long one is passed over for shorter ones after
    it), then "+N" for the rest."""
    shown: list[str] = []
    used = 0
    for pair in pairs:
        left = len(pairs) - len(shown) - 1  # the others, were this one shown
        tail = len(f" +{left}") if left else 0
        if used + (1 if shown else 0) + len(pair) + tail <= room:
            shown.append(pair)
            used += (1 if len(shown) > 1 else 0) + len(pair)
    more = len(pairs) - len(shown)
    if more:
        shown.append(f"+{more}" if shown else f"{more} knobs differ from the default")
    text = " ".join(shown)
    return text if len(text) <= room else ""


class Printer:
    """Prints the tuner's progress events (the Tuner's `progress` callback)."""

    def __init__(self, console: Console, objective, baseline: dict, verbosity: int = NORMAL):

        self.console, self.objective, self.verbosity = console, objective, verbosity
        self.default = settings.flatten(baseline) if baseline else {}
        self.shown: set[str] = set()  # notes already printed
        self.round: list[dict] = []  # the confirmation round's runs so far
        self.columns: list[str] = []  # who the confirmation lines' columns are

    def __call__(self, e: dict) -> None:
        kind = e["kind"]
        if kind == "note":
            self.shown.add(e["text"])
            note(self.console, e["text"])
        elif self.verbosity == QUIET:
            if kind == "baseline" and e.get("error"):
                self._baseline(e)
        elif kind == "baseline":
            self._baseline(e)
        elif kind == "training":
            self._training(e)
        elif kind == "trial":
            self._trial(e)
        elif kind == "confirm":
            self._confirm(e)

    def _fmt(self, value: float | None) -> str:
        return printout.fmt_value(value, self.objective.unit)

    def _when(self, e: dict) -> str:
        return f"{printout.fmt_time(e.get('clock')):>7}"

    def _knobs(self, settings: dict) -> list[str]:
        shown = settings if self.verbosity >= VERBOSE else differing(settings, self.default)
        names = short_names(shown)
        return [f"{names[k]}={value_text(k, v)}" for k, v in shown.items()]

    def _line(self, head: Text, pairs: list[str], style: str = "dim") -> None:
        """head, then the knobs: fitted to the width (one line), or all of them with --verbose, wrapped
        under the line with an indent."""
        width = self.console.width
        if self.verbosity >= VERBOSE:
            self.console.print(head, soft_wrap=True)
            if pairs:
                self.console.print(indented(Text(" ".join(pairs), style=style), 11))
            return
        room = width - len(head.plain) - 2
        knobs = fit_knobs(pairs, room) if pairs else ""
        self.console.print(head + Text(f"  {knobs}" if knobs else "", style=style), soft_wrap=True)

    def _baseline(self, e: dict) -> None:
        if e.get("error"):
            self.console.print(
                Text(f"baseline run failed: {printout.error_line(e['error'], self.console.width)}", style="red"),
                soft_wrap=True,
            )
            return
        self.console.print(
            Text(f"{self._when(e)}  baseline ({e['reason']}): {self._fmt(e['value'])}; ")
            + Text(f"default now {self._fmt(e['default'])}"),
            soft_wrap=True,
        )

    def _training(self, e: dict) -> None:
        result = Text("failed", style="red") if e.get("error") else Text(self._fmt(e["value"]))
        head = Text(f"{self._when(e)}  training {e['number']:>3}  ") + result
        self._line(head, self._knobs(e["settings"]))

    def _trial(self, e: dict) -> None:
        budget = f"{e['done']}/{e['budget']}" if e.get("budget") else f"{e['done']}"
        left = e.get("left_s")
        bracket = f"[{budget}" + (f" ~{printout.fmt_time(left)} left]" if left is not None else "]")
        head = Text(f"{self._when(e)}  trial {e['number']:>3}  ")
        pairs = self._knobs(e["settings"])
        if e.get("error"):
            self._line(head + Text("failed", style="red") + Text(f"  {bracket}"), pairs)
            width = self.console.width - 11
            self.console.print(Text(" " * 11 + printout.error_line(e["error"], width), style="dim"), soft_wrap=True)
            return
        value = self._fmt(e["value"])
        gain = self.objective.gain(e["value"], e["default"]) if e.get("default") else None
        best = e.get("best") is not None and e["value"] == e["best"]
        head += Text(f"{value:>13}")
        head += Text(f"  {gain:.2f}x" if gain is not None else "")
        head += Text(" best" if best else "     ", style="bold green" if best else "")
        head += Text(f"  {bracket}")
        dup = e.get("duplicate_of")
        if dup is not None:
            pairs = ["(as the default)" if dup == SAME_AS_DEFAULT else f"(as {dup})"] + pairs
        self._line(head, pairs)

    def _confirm(self, e: dict) -> None:
        """One line a round, printed when its last run is in (with --verbose, a line a run)."""
        who = e.get("name") or ("default" if e["trial"] is None else f"trial {e['trial']}")
        if self.verbosity >= VERBOSE:
            value = self._fmt(e["value"]) if e.get("value") is not None else "failed"
            self.console.print(f"{self._when(e)}  confirm {e['round']}/{e['rounds']} {who}: {value}", soft_wrap=True)
            return
        value = printout.fmt_value(e["value"], None) if e.get("value") is not None else "failed"
        if self.round and self.round[0]["round"] != e["round"]:
            self.round = []  # a round cut short (a failed run, a stop): start the next one afresh
        self.round.append({**e, "who": who, "text": value})
        if len(self.round) < e.get("runs_in_round", len(self.round)):
            return
        runs = sorted(self.round, key=lambda r: (r["trial"] is not None, r["trial"] or 0, r["who"]))
        widths = [max(9, len(r["who"])) for r in runs]
        if e["round"] == 1 or self.columns != [r["who"] for r in runs]:  # the columns' names, once
            self.columns = [r["who"] for r in runs]
            unit = f" ({self.objective.unit})" if self.objective.unit else ""
            names = "  ".join(f"{r['who']:>{w}}" for r, w in zip(runs, widths))
            self.console.print(Text(f"{'':7}  {'confirm' + unit:<14}  {names}"), soft_wrap=True)
        values = "  ".join(f"{r['text']:>{w}}" for r, w in zip(runs, widths))
        self.console.print(
            Text(f"{self._when(e)}  {str(e['round']) + '/' + str(e['rounds']):<14}  {values}"), soft_wrap=True
        )
        self.round = []


def note(console: Console, text: str) -> None:
    """A note as plain text: a model's '[romio_cb_write=enable] / cb_nodes' is no rich markup."""
    console.print(Text.assemble(("note:", "yellow"), " ", text))
