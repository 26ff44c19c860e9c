"""Optuna through its public API: one adapter module (iotuner/tune/optuna_compat.py) holds every private access, and
names the Optuna versions it was checked against; the installed Optuna (setup installs the newest) is one of them.
The study storage's two backends share one typed interface."""

import ast
import inspect
from functools import lru_cache
from pathlib import Path

import optuna
import pytest

from iotuner.tune import optuna_compat
from iotuner.tune.study import storage as study_storage

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "python/iotuner/tune/optuna_compat.py"
TREES = ["python", "tests", "bench", "kernels", "scripts"]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@lru_cache(maxsize=1)
def optuna_private_attributes() -> frozenset:
    """The private attributes and methods of Optuna's classes (`self._x`, `def _x` in a class), from its source."""
    names = set()
    for path in Path(optuna.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names.update(
                    b.name for b in node.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                )
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return frozenset(n for n in names if _private(n))


NAMEDTUPLE = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}  # public API with an underscore


@lru_cache(maxsize=1)
def iotuner_private_attributes() -> frozenset:
    """The private attributes iotuner's own classes define (`self._x`, `def _x` in a class): reading one off
    another of iotuner's objects is not Optuna's business."""
    names = set()
    for tree in TREES:
        for path in (ROOT / tree).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    names.update(b.name for b in node.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)))
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                    if isinstance(node.ctx, ast.Store):
                        names.add(node.attr)
    return frozenset(n for n in names if _private(n))


def _chain(node: ast.AST) -> list[str] | None:
    """a.b.c as [a, b, c] when it is a chain of names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id] + parts[::-1]


def private_optuna_names(source: str) -> list[tuple[int, str]]:
    """(line, what) for each private Optuna name the source names: an import of or from a private Optuna module
    or name (optuna.storages._rdb, _CachedStorage), a private name reached from the optuna module
    (optuna.storages._CachedStorage), or a private attribute of Optuna's classes read off any object but self
    (study._storage, trial._trial_id, sampler._n_startup_trials)."""
    tree = ast.parse(source)
    aliases = {"optuna"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "optuna":
                    aliases.add(a.asname or "optuna")
                    if any(_private(p) for p in a.name.split(".")):
                        found.append((node.lineno, a.name))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "optuna":
            if any(_private(p) for p in node.module.split(".")):
                found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if _private(a.name)]
    attrs = optuna_private_attributes() - iotuner_private_attributes() - NAMEDTUPLE
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        chain = _chain(node)
        if chain and chain[0] in aliases:
            found.append((node.lineno, ".".join(chain)))
        elif node.attr in attrs and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(set(found))


def test_the_check_finds_each_kind_of_private_access():
    source = """
import optuna
import optuna.storages._rdb.models as m
from optuna.storages._rdb import models
from optuna.storages import _CachedStorage
x = optuna.storages._CachedStorage
study._thread_local.cached_all_trials = None
study._storage.get_trial_system_attrs(trial._trial_id)
sampler._n_startup_trials = 3
self._lock = None
"""
    # none of Optuna's privates that iotuner used to touch is a name of iotuner's own, which the check would pass
    touched = {"_storage", "_study_id", "_trial_id", "_thread_local", "_n_startup_trials", "_backend", "_contains"}
    assert touched <= optuna_private_attributes() and not touched & iotuner_private_attributes()
    found = [what for _, what in private_optuna_names(source)]
    assert found == [
        "optuna.storages._rdb.models",
        "optuna.storages._rdb",
        "optuna.storages._CachedStorage",
        "optuna.storages._CachedStorage",
        "study._thread_local",
        "study._storage",
        "trial._trial_id",
        "sampler._n_startup_trials",
    ]


def test_no_module_but_the_adapter_names_a_private_optuna_name():
    offenders = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if path == ADAPTER or ".venv" in path.parts:
                continue
            for line, what in private_optuna_names(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not offenders, "private Optuna names outside optuna_compat.py:\n" + "\n".join(offenders)


def test_the_adapter_was_checked_against_the_installed_optuna():
    """setup installs the newest Optuna release: a new one fails here until the adapter is checked against it
    (its docstring says how) and its version added."""
    major_minor = ".".join(optuna.__version__.split(".")[:2])
    assert major_minor in optuna_compat.CHECKED, (
        f"optuna {optuna.__version__} is installed, but iotuner/tune/optuna_compat.py was checked against "
        f"{', '.join(optuna_compat.CHECKED)} only"
    )


def test_the_adapter_reaches_optunas_tables():
    t = optuna_compat.tables()
    assert t.trials.name == "trials" and {"trial_id", "number", "state", "study_id"} <= set(t.trials.c.keys())
    assert t.study_user_attrs.name == "study_user_attributes"
    assert optuna_compat.stored_value(1.5)[0] == 1.5 and optuna_compat.stored_value(float("inf"))[0] is None
    assert isinstance(optuna_compat.schema_version(), int)
    sampler = optuna.samplers.TPESampler(n_startup_trials=7)
    assert optuna_compat.startup_trials(sampler) == 7


@pytest.mark.parametrize("backend", [study_storage.ApiBackend, study_storage.SqlBackend])
def test_both_study_backends_implement_the_one_interface(backend):
    """Each backend is a StudyBackend with nothing abstract left, and each method takes what the interface says."""
    assert issubclass(backend, study_storage.StudyBackend)
    assert not getattr(backend, "__abstractmethods__", None)
    for name in study_storage.StudyBackend.__abstractmethods__:
        want = inspect.signature(getattr(study_storage.StudyBackend, name))
        got = inspect.signature(getattr(backend, name))
        assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == [
            (p.name, p.kind, p.default) for p in want.parameters.values()
        ], name


def test_both_backends_answer_alike(tmp_path):
    """The same writes through the in-memory storage's API and through SQL on SQLite read back the same."""
    dist = optuna.distributions.CategoricalDistribution(["enable", "disable"])
    seen = []
    for where in (optuna.storages.InMemoryStorage(), f"sqlite:///{tmp_path}/s.db"):
        db = study_storage.StudyStorage.create(where, "s", "minimize", {"k": 1})
        b, companion = db.backend, db.companion_id
        tid, number = b.create(db.study_id, "RUNNING", {"owner": "w"}, heartbeat=True)
        b.publish(tid, {"x": ("disable", dist)}, {"settings": {"k": 1}})
        finished = (b.finish(tid, "COMPLETE", {"result": {"v": 2}}, 3.0), b.finish(tid, "FAIL", {"late": 1}))
        other, _ = b.create(companion, "COMPLETE", {"kind": "baseline"}, value=1.0, touch=(companion, "t", 1))
        b.set_study_attr(companion, "lease", {"n": 1})
        swaps = [
            b.swap_study_attr(companion, "lease", {"n": 1}, {"n": 2}),
            b.swap_study_attr(companion, "lease", {"n": 1}, {"n": 3}),
        ]
        swaps.append(b.swap_study_attr(companion, "new", None, 1))
        rows, attrs = b.read(db.studies, {}, set(), companion)
        later, _ = b.read(db.studies, {r.study: r.id for r in rows}, set())
        seen.append(
            (
                [(r.number, r.state, r.attrs, r.search) for r in rows],
                attrs,
                later,
                b.params(tid),
                finished,
                swaps,
                number,
            )
        )
    assert seen[0] == seen[1]
    rows, attrs, later, params, finished, swaps, number = seen[0]
    assert rows[0] == (0, "COMPLETE", {"owner": "w", "settings": {"k": 1}, "result": {"v": 2}}, True)
    assert attrs == {"t": 1, "lease": {"n": 2}, "new": 1} and later == [] and finished == (True, False)
    assert swaps == [True, False, True] and params == {"x": ("disable", dist)} and number == 0
