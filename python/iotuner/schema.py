"""Reading iotuner's own documents against their JSON schemas (docs/*.schema.json).

A document that parsed as JSON can still hold a list where a string goes, or a
nested object where a number goes; a reader that trusts it fails far away with
a traceback. `check` validates a document on the way in and names the first
field that does not match, in one line ("phases[3].settings[0].status: 'x' is
not one of applied, changed, ..."), so readers downstream can trust the shapes.

A small validator of the JSON Schema keywords the project's schemas use (type,
properties, required, additionalProperties, propertyNames, minProperties, items, prefixItems, enum, const,
minimum, maximum, minItems, maxItems, minLength, pattern, oneOf, anyOf, $ref
to $defs or to another of the schemas), so that reading a report does not
need the jsonschema package. Numbers must be finite (JSON has no NaN).
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any

import iotuner

from . import native


class SchemaError(ValueError):
    """The document does not match its schema: the message names the field."""


def schema_dir() -> Path:
    """docs/ of a source checkout, else the schemas installed with the package."""
    source = Path(iotuner.__file__).resolve().parents[2] / "docs"
    if (source / "report.schema.json").is_file():
        return source

    return native.native_dir() / "share" / "iotuner" / "schemas"


@functools.cache
def load(name: str) -> dict:
    """A schema by file name ("report.schema.json")."""
    return json.loads((schema_dir() / name).read_text())


def check(doc: Any, name: str) -> None:
    """SchemaError naming the first field of doc that does not match the schema `name`."""
    root = load(name)
    problem = _Validator(root).first(doc, root, "")
    if problem:
        where, what = problem
        raise SchemaError(f"{where or 'the document'}: {what}")


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: (
        isinstance(v, (int, float)) and not isinstance(v, bool) and (not isinstance(v, float) or math.isfinite(v))
    ),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _show(v: Any) -> str:
    text = json.dumps(v, allow_nan=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, float) and not math.isfinite(v):
        return f"{v} (not a JSON number)"
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(v), type(v).__name__)


class _Validator:
    def __init__(self, root: dict):
        self.root = root

    def _resolve(self, ref: str) -> dict:
        target, _, pointer = ref.partition("#")
        doc = self.root if not target else load(_external(target))
        for part in filter(None, pointer.split("/")):
            doc = doc[part]
        return doc

    def first(self, v: Any, s: dict, where: str) -> tuple[str, str] | None:
        """(where, what) of the first mismatch, or None."""
        if "$ref" in s:
            found = _Validator(
                self.root
                if "#" in s["$ref"] and not s["$ref"].split("#")[0]
                else load(_external(s["$ref"].split("#")[0]))
            )
            problem = found.first(v, found._resolve("#" + s["$ref"].partition("#")[2]), where)
            if problem:
                return problem
        if "type" in s:
            types = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(_TYPES[t](v) for t in types):
                return where, f"expected {' or '.join(types)}, got {_kind(v)}"
        if "const" in s and v != s["const"]:
            return where, f"{_show(v)} is not {_show(s['const'])}"
        if "enum" in s and v not in s["enum"]:
            return where, f"{_show(v)} is not one of {', '.join(map(_show, s['enum']))}"
        if _TYPES["number"](v):
            if "minimum" in s and v < s["minimum"]:
                return where, f"{v} is below the minimum {s['minimum']}"
            if "maximum" in s and v > s["maximum"]:
                return where, f"{v} is above the maximum {s['maximum']}"
        if isinstance(v, str):
            if len(v) < s.get("minLength", 0):
                return where, "is too short"
            if "pattern" in s and not re.search(s["pattern"], v):
                return where, f"{_show(v)} does not match {s['pattern']}"
        if isinstance(v, list):
            problem = self._array(v, s, where)
            if problem:
                return problem
        if isinstance(v, dict):
            problem = self._object(v, s, where)
            if problem:
                return problem
        for key in ("oneOf", "anyOf"):
            if key in s:
                problems = [self.first(v, sub, where) for sub in s[key]]
                fits = sum(p is None for p in problems)
                if fits == 0 or (key == "oneOf" and fits > 1):
                    # the closest alternative's complaint: the one that got deepest into the value
                    best = max((p for p in problems if p), key=lambda p: len(p[0]), default=(where, "no match"))
                    return best if fits == 0 else (where, "matches more than one of the allowed forms")
        return None

    def _array(self, v: list, s: dict, where: str) -> tuple[str, str] | None:
        if len(v) < s.get("minItems", 0):
            return where, f"has {len(v)} items, fewer than {s['minItems']}"
        if "maxItems" in s and len(v) > s["maxItems"]:
            return where, f"has {len(v)} items, more than {s['maxItems']}"
        prefix = s.get("prefixItems", [])
        for i, item in enumerate(v):
            sub = prefix[i] if i < len(prefix) else s.get("items")
            if isinstance(sub, dict):
                problem = self.first(item, sub, f"{where}[{i}]")
                if problem:
                    return problem
        return None

    def _object(self, v: dict, s: dict, where: str) -> tuple[str, str] | None:
        dot = f"{where}." if where else ""
        for key in s.get("required", []):
            if key not in v:
                return f"{dot}{key}", "is missing"
        if len(v) < s.get("minProperties", 0):
            return where, f"has {len(v)} fields, fewer than {s['minProperties']}"
        if "propertyNames" in s:
            for key in v:
                problem = self.first(key, s["propertyNames"], f"{dot}{key}")
                if problem:
                    return problem[0], f"is not a name this field takes ({problem[1]})"
        props = s.get("properties", {})
        extra = s.get("additionalProperties", True)
        for key, item in v.items():
            if key in props:
                problem = self.first(item, props[key], f"{dot}{key}")
            elif extra is False:
                return f"{dot}{key}", "is not a field of this document"
            elif isinstance(extra, dict):
                problem = self.first(item, extra, f"{dot}{key}")
            else:
                continue
            if problem:
                return problem
        return None


def _external(target: str) -> str:
    """A $ref to another schema, by its $id or file name, as a file name under docs/."""
    name = target.rsplit("/", 1)[-1]
    return {"settings-1.json": "settings.schema.json"}.get(name, name)
