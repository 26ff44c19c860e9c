"""The Python wing's modules import one another one way (docs/development.md, The Python wing's layers), and the
tuner's classes stay small (at most 25 methods each).

Every module of python/iotuner is parsed with `ast`: its imports at module level and inside functions both
count (an import inside a function still ties the two modules together; it only runs later). Imports under
`if TYPE_CHECKING:` never run and do not count. Importing `a.b.c` also runs the packages `a` and `a.b`, so
those count too, except a module's own enclosing packages (already being imported when it runs)."""

from __future__ import annotations

import ast
import graphlib
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent / "python"

# Lowest first: a module may import its own layer and those below, never one above. A module belongs to the
# layer of the longest prefix that names it. Inside `iotuner.tune`, the tuner's own layers.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # reports, settings, the catalogue, the native core, running a job; and the tuner's wording of a study, which
    # imports nothing and which the HTML page shares
    ("base", ("iotuner", "iotuner.tune.printout")),
    (
        "libraries",
        (
            "iotuner.perfmodel",
            "iotuner.advise",
            "iotuner.recommend",
            "iotuner.kernel",
            "iotuner.htmlreport",
            "iotuner.smart_mode",
        ),
    ),
    ("simulator", ("iotuner.simulate",)),
    (
        "tune: terms",
        (
            "iotuner.tune",
            "iotuner.tune.tune_error",
            "iotuner.tune.study_config",
            "iotuner.tune.objective",
            "iotuner.tune.space",
            "iotuner.tune.noise",
        ),
    ),
    (
        "tune: launchers",  # how a point is measured: a job, a recording, a model, the simulator
        (
            "iotuner.tune.launch",
            "iotuner.tune.evaluate",
            "iotuner.tune.replay",
            "iotuner.tune.synthetic",
            "iotuner.tune.simulated",
            "iotuner.tune.trialdoc",
        ),
    ),
    (
        "tune: storage",
        ("iotuner.tune.study", "iotuner.tune.store", "iotuner.tune.trajectory", "iotuner.tune.optuna_compat"),
    ),
    ("tune: protocol", ("iotuner.tune.protocol",)),
    ("tune: stop rules", ("iotuner.tune.stop", "iotuner.tune.stoppers")),
    ("tune: strategies", ("iotuner.tune.strategies",)),
    (
        "tune: engine",
        (
            "iotuner.tune.runs",
            "iotuner.tune.search",
            "iotuner.tune.confirmation",
            "iotuner.tune.tuner",
            "iotuner.tune.verdict",
            "iotuner.tune.workers",
            "iotuner.tune.results",
            "iotuner.tune.progress",
        ),
    ),
    ("tune: front", ("iotuner.tune.session", "iotuner.tune.arguments", "iotuner.tune.dashboard_note")),
    ("commands", ("iotuner.commands", "iotuner.cli", "iotuner.__main__")),
]

# Imports of iotuner's own modules inside functions: the command modules import what their command needs when
# it runs (`iotuner --help` loads none of it), and a few others for the same reason. No more than today's.
MAX_FUNCTION_IMPORTS = 100

# Why each module imports iotuner's own modules inside functions: each reason is start-up time or an optional
# part, never a cycle (the cycle test sees imports inside functions too). A module not listed must import at the top.
LAZY_IMPORT_REASONS = {
    "iotuner/cli.py": "the entry point loads only the chosen subcommand's needs",
    "iotuner/commands/": "a subcommand loads what it runs when it runs: `iotuner --help` and the others start fast",
    "iotuner/htmlreport/__init__.py": "one page kind a call: a run page does not load the study page's plotting",
    "iotuner/kernel/discover.py": "libclang (optional) is loaded only when a kernel is extracted",
    "iotuner/kernel/fmt.py": "the install command is looked up only when clang-format is missing",
    "iotuner/simulate/workload.py": "PyDarshan (optional, pandas) is loaded only for a Darshan log",
    "iotuner/tune/launch/__init__.py": "only the launcher a study asks for (Slurm's is not loaded for a local study)",
    "iotuner/tune/session.py": "workers, kernels and the HTML report load only in the modes that use them",
    "iotuner/tune/simulated.py": "the simulator loads only under --simulate",
    "iotuner/tune/strategies/auto/__init__.py": "Optuna's TPE loads only once the prior's points are spent",
    "iotuner/tune/strategies/model/strategy.py": "scikit-learn's fitting loads only when the model is fitted",
    "iotuner/tune/strategies/model/data.py": "the model's features (numpy) load only when the model is fitted",
    "iotuner/tune/strategies/model/warm_start.py": "a saved model (numpy, SciPy) loads only for --warm-start",
    "iotuner/tune/strategies/tunio/pretrain.py": "Gymnasium (optional) loads only for pretraining",
}


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__)."""
    out = {}
    for p in sorted((ROOT / "iotuner").rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (p, package)
    return out


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(name: str, path: Path, package: bool, known: set[str]) -> list[tuple[str, bool, int]]:
    """(imported module, inside a function, line) for every import of iotuner's own modules."""
    out: list[tuple[str, bool, int]] = []

    def targets(node) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names if a.name.split(".")[0] == "iotuner"]
        if node.level:
            base = name.split(".") if package else name.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        if mod.split(".")[0] != "iotuner":
            return []
        return [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]

    def visit(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for t in targets(child):
                    while t not in known and "." in t:
                        t = t.rsplit(".", 1)[0]
                    out.append((t, in_function, child.lineno))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text()), False)
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, list[int]]]:
    """module -> {module it imports (with the packages that import runs): the lines}."""
    mods = modules()
    known = set(mods)
    empty = {n for n, (p, package) in mods.items() if package and not imports(n, p, package, known)}
    out: dict[str, dict[str, list[int]]] = {}
    for name, (path, package) in mods.items():
        edges: dict[str, list[int]] = {}
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)} | {name}
        for target, _, line in imports(name, path, package, known):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                t = ".".join(parts[:i])
                if t != target and t in empty:  # a package whose __init__ imports nothing ties nothing
                    continue
                if t in known and t not in own:
                    edges.setdefault(t, []).append(line)
        if package:  # a package's __init__ re-exporting its own submodules is no cycle
            edges = {t: v for t, v in edges.items() if not t.startswith(name + ".")}
        out[name] = edges
    return out


def layer_of(module: str) -> int:
    best, level = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), i
    assert level >= 0, f"{module} is in no layer of LAYERS"
    return level


def test_no_import_cycle(graph):
    try:
        list(graphlib.TopologicalSorter({a: set(b) for a, b in graph.items()}).static_order())
    except graphlib.CycleError as e:
        cycle = e.args[1]
        pytest.fail(
            "modules importing each other in a circle: "
            + " -> ".join(f"{a} (line {graph[a][b][0]})" for a, b in zip(cycle, cycle[1:]))
            + f" -> {cycle[-1]}"
        )


def test_imports_go_down_the_layers(graph):
    upward = [
        f"{a} ({LAYERS[layer_of(a)][0]}, line {lines[0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a, targets in sorted(graph.items())
        for b, lines in sorted(targets.items())
        if layer_of(b) > layer_of(a)
    ]
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_model_is_imported_from_perfmodel_only(graph):
    """No module outside the strategies imports a strategy's package, and the model imports no strategy."""
    for a, targets in graph.items():
        for b in targets:
            if b.startswith("iotuner.tune.strategies.") and not a.startswith("iotuner.tune.strategies"):
                pytest.fail(f"{a} imports {b}, a strategy's module")
            if a.startswith("iotuner.perfmodel"):
                assert not b.startswith("iotuner.tune"), f"the model ({a}) imports the tuner ({b})"


def test_function_level_imports_stay_few():
    mods = modules()
    found = {
        f"{path.relative_to(ROOT)}:{line}"
        for name, (path, package) in mods.items()
        for _, inside, line in imports(name, path, package, set(mods))
        if inside
    }
    assert len(found) <= MAX_FUNCTION_IMPORTS, (
        f"{len(found)} imports of iotuner's modules inside functions (at most {MAX_FUNCTION_IMPORTS}): import at "
        "the top unless the import keeps start-up fast"
    )


def test_every_function_level_import_has_a_reason():
    mods = modules()
    unexplained = sorted(
        f"{path.relative_to(ROOT)}:{line}"
        for name, (path, package) in mods.items()
        for _, inside, line in imports(name, path, package, set(mods))
        if inside and not any(str(path.relative_to(ROOT)).startswith(m) for m in LAZY_IMPORT_REASONS)
    )
    assert not unexplained, (
        "imports inside functions in a module without a reason in LAZY_IMPORT_REASONS (import at the top, or "
        "add the module and why): " + ", ".join(unexplained)
    )


def same_names(mods: dict[str, tuple[Path, bool]]) -> dict[str, list[str]]:
    """Module names (the last part) that more than one module has. A package shares its name with a module
    (`iotuner.tune` and `iotuner.commands.tune`: a command named after the part it runs); two modules may not."""
    by_name: dict[str, list[str]] = {}
    for name, (_, package) in mods.items():
        if not package:
            by_name.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    return {n: sorted(v) for n, v in sorted(by_name.items()) if len(v) > 1}


def test_no_two_modules_share_a_name():
    """A name says which module is meant (`run`, `report`, `config` each named two before)."""
    twice = same_names(modules())
    assert not twice, "modules with the same name (rename one): " + "; ".join(
        f"{n}: {', '.join(v)}" for n, v in twice.items()
    )


def test_the_layers_and_the_cycle_check_can_fail():
    """The checks see what they are for: a cycle, an upward import, a strategy's module from outside and two modules
    of one name."""
    cyclic = {"a": {"b": [1]}, "b": {"a": [2]}}
    with pytest.raises(pytest.fail.Exception, match="circle"):
        test_no_import_cycle(cyclic)
    with pytest.raises(AssertionError, match="iotuner.run_report .* imports iotuner.tune.tuner"):
        test_imports_go_down_the_layers({"iotuner.run_report": {"iotuner.tune.tuner": [3]}, "iotuner.tune.tuner": {}})
    with pytest.raises(pytest.fail.Exception, match="a strategy's module"):
        test_the_model_is_imported_from_perfmodel_only({"iotuner.simulate.trace": {"iotuner.tune.strategies.x": [4]}})
    pair = {"iotuner.report": (Path("report.py"), False), "iotuner.commands.report": (Path("report.py"), False)}
    assert same_names(pair) == {"report": ["iotuner.commands.report", "iotuner.report"]}
    assert (
        same_names({"iotuner.tune": (Path("__init__.py"), True), "iotuner.commands.tune": (Path("t.py"), False)}) == {}
    )


def test_starting_the_cli_imports_no_heavy_package():
    """`iotuner --help` and `iotuner tune --help` load neither Optuna, scikit-learn nor matplotlib."""
    import subprocess
    import sys

    code = (
        "import sys, contextlib, io\n"
        "from iotuner import cli\n"
        "for argv in (['--help'], ['tune', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try: cli.main(argv)\n"
        "        except SystemExit: pass\n"
        "print(' '.join(m for m in ('optuna', 'sklearn', 'matplotlib') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "", f"iotuner --help imported {r.stdout.strip()}"


# Small owners: no class of the tuner carries more than this many methods (issue 41: the tuner split into its
# search, confirmation and verdict, the store into the views its callers use).
MAX_METHODS = 25


def methods_of(cls: type) -> set[str]:
    """The methods (properties and class methods too) a class defines, and those its iotuner bases bring in
    (a mixin's are the class's own), but for the strategy protocol's hooks, which every strategy has."""
    from iotuner.tune.protocol import Strategy

    out: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("iotuner") or base is Strategy:
            continue
        out |= {
            k
            for k, v in vars(base).items()
            if inspect.isfunction(v) or isinstance(v, (property, classmethod, staticmethod))
        }
    return out


def fat_classes(classes: list[type], limit: int = MAX_METHODS) -> list[str]:
    return sorted(
        f"{c.__module__}.{c.__qualname__}: {len(methods_of(c))} methods" for c in classes if len(methods_of(c)) > limit
    )


def tuner_classes() -> list[type]:
    import iotuner.tune

    out = []
    for info in pkgutil.walk_packages(iotuner.tune.__path__, "iotuner.tune."):
        module = importlib.import_module(info.name)
        out += [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == info.name]
    return out


def test_no_class_of_the_tuner_has_more_than_25_methods():
    classes = tuner_classes()
    assert any(c.__name__ == "Store" for c in classes)  # the walk sees the tuner's classes
    fat = fat_classes(classes)
    assert not fat, f"classes over {MAX_METHODS} methods (split them by what their callers need): " + "; ".join(fat)


def test_the_method_count_can_fail():
    mixin = type("Mixin", (), {f"m{i}": lambda self: None for i in range(20)})
    mixin.__module__ = "iotuner.tune.fake"
    fat = type("Fat", (mixin,), {f"n{i}": lambda self: None for i in range(6)})
    fat.__module__ = "iotuner.tune.fake"
    assert fat_classes([fat]) == ["iotuner.tune.fake.Fat: 26 methods"]  # a mixin's methods count
    assert fat_classes([mixin]) == []
