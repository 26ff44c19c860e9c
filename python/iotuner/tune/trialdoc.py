"""A trial's settings document, and what took effect in one of its runs: what the search, the strategies'
own runs and the confirmation round all run and record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import settings
from .evaluate import Measurement, requested


def trial_doc(baseline: dict, flat: Mapping[str, Any], meta: dict | None = None) -> dict:
    """The baseline document with the trial's knobs as a last group, overriding it knob by knob."""
    doc = settings.validate(baseline)
    doc["groups"] = doc.get("groups", []) + settings.from_flat(flat)["groups"]
    if meta:
        doc["meta"] = meta
    return doc


def effective_of(m: Measurement, doc: dict) -> dict[str, list[str]]:
    """What took effect in a run: read back, or what was requested when nothing was read back."""
    return m.effective if m.effective is not None else requested(doc)
