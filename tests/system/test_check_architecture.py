"""scripts/check_architecture.py, run as CI runs it: on a small package built to break each rule once, and
on memsync's own tree (its figures, and findings in the one-line form)."""

from __future__ import annotations

import importlib.util
import itertools
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "check_architecture.py"
FIGURES = (
    "modules",
    "root modules",
    "functions",
    "forwarders",
    "circles",
    "contract rows",
    "uncovered modules",
    "lines of code",
    "module size median",
    "module size p90",
    "function size median",
    "function size p90",
)


def _check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_architecture", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look the module up in sys.modules while the class is made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CHECK = _script()


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _contract(rows: list[str]) -> str:
    listed = "".join(f'    "{row}",\n' for row in rows)
    return (
        '[tool.importlinter]\nroot_package = "memsync"\n\n[[tool.importlinter.contracts]]\n'
        f'name = "memsync layers"\ntype = "layers"\nlayers = [\n{listed}]\n'
    )


BROKEN = {
    "memsync/__init__.py": "",
    "memsync/__main__.py": "",
    "memsync/errors.py": "",
    "memsync/hook.py": "",
    "memsync/extra.py": "",
    # A circle closed only through a TYPE_CHECKING import (relative, from the package).
    "memsync/shapes/__init__.py": "",
    "memsync/shapes/circle.py": "from memsync.shapes.square import Square\n",
    "memsync/shapes/square.py": (
        "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .circle import Circle\n\nclass Square:\n    pass\n"
    ),
    # A circle closed only by an import inside a function, through a package's __init__.
    "memsync/loop/__init__.py": "from memsync.loop.first import run\n",
    "memsync/loop/first.py": "def run() -> None:\n    from memsync import loop\n    print(loop)\n",
    # Forwarders, and their near misses, which are not.
    "memsync/calls/__init__.py": "",
    "memsync/calls/forward.py": (
        "import os\n\n"
        "def plain(a, b, *rest, key, **more):\n"
        '    """Docstring."""\n'
        "    return os.path.join(a, b, *rest, key=key, **more)\n\n"
        "class Facade:\n"
        "    def rev(self, ref):\n"
        "        self._require()\n"
        "        return self._g.rev(ref)\n\n"
        "    def log(self, text, now=None):\n"
        "        return append_log(self, text, now)\n\n"
        "    def changed(self, ref):\n"
        "        return self._g.rev(ref, True)\n\n"
        "    def renamed(self, ref):\n"
        "        return self._g.rev(ref=ref.strip())\n\n"
        "    def __len__(self):\n"
        "        return len(self._items)\n\n"
        "    @property\n"
        "    def head(self):\n"
        "        return self._g.head()\n\n"
        "    def with_(self, at):\n"
        "        return replace(self, at=at)\n\n"
        "def reordered(a, b):\n"
        "    return os.path.join(b, a, a)\n\n"
        "def countdown(n):\n"
        "    return countdown(n)\n\n"
        "def encoded():\n"
        '    return f"{os.sep}".encode()\n'
    ),
    "pyproject.toml": _contract(
        [f"memsync.layer{n}" for n in range(14)] + ["memsync.shapes | memsync.loop", "memsync.errors"]
    ),
}


def test_each_rule_is_reported_once_in_one_line(tmp_path: Path) -> None:
    _write(tmp_path, BROKEN)
    result = _check(tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        "circle: memsync.loop -> memsync.loop.first -> memsync.loop",
        "circle: memsync.shapes.circle -> memsync.shapes.square -> memsync.shapes.circle",
        "root: 5 modules at the package root (at most 4): "
        "memsync, memsync.__main__, memsync.errors, memsync.extra, memsync.hook",
        "forwarder: memsync/calls/forward.py:3 plain only passes its arguments on",
        "forwarder: memsync/calls/forward.py:8 rev only passes its arguments on",
        "forwarder: memsync/calls/forward.py:12 log only passes its arguments on",
        "contract: 'memsync layers' has 16 rows (at most 15)",
        "uncovered: memsync.__main__ is in no row of the layers contract",
        "uncovered: memsync.calls is in no row of the layers contract",
        "uncovered: memsync.calls.forward is in no row of the layers contract",
        "uncovered: memsync.extra is in no row of the layers contract",
        "uncovered: memsync.hook is in no row of the layers contract",
    ]


def test_a_tree_that_keeps_the_rules_passes_silently(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "memsync/__init__.py": "",
            "memsync/__main__.py": "from memsync.cli import main\n",
            "memsync/errors.py": "",
            "memsync/cli/__init__.py": (
                "from memsync.errors import MemsyncError\n\n"
                "def main(argv):\n    return run(argv, MemsyncError)\n"
            ),
            "pyproject.toml": _contract(["memsync.cli | memsync.__main__", "memsync.errors"]),
        },
    )
    result = _check(tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    figures = dict(line.split(": ", 1) for line in _check(tmp_path, "--figures").stdout.splitlines())
    assert figures == {
        "modules": "4",
        "root modules": "3",
        "functions": "1",
        "forwarders": "0",
        "circles": "0",
        "contract rows": "2",
        "uncovered modules": "0",
        "lines of code": "5",
        "module size median": "0.5",
        "module size p90": "4",
        "function size median": "2",
        "function size p90": "2",
    }


def test_memsync_tree_is_measured_and_its_findings_are_one_line_each() -> None:
    result = _check(REPO_ROOT, "--figures")
    assert result.returncode == 0, result.stderr
    figures = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert tuple(figures) == FIGURES
    package = REPO_ROOT / "memsync"
    assert int(figures["modules"]) == len(list(package.rglob("*.py")))
    assert int(figures["root modules"]) == len(list(package.glob("*.py")))
    assert int(figures["lines of code"]) == sum(
        len(p.read_text().splitlines()) for p in package.rglob("*.py")
    )
    # The findings' exit code and stream are the first test's; here, their form on the real tree.
    lines = CHECK.findings(REPO_ROOT, "memsync")
    assert all(re.match(r"(circle|root|forwarder|contract|uncovered): \S", line) for line in lines), lines


def test_memsync_tree_keeps_the_rules() -> None:
    """No circle, forwarder, uncovered module or excess row in memsync itself: the check CI runs passes."""
    result = _check(REPO_ROOT)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout


_EDGES = st.dictionaries(
    st.sampled_from("abcdefg"), st.sets(st.sampled_from("abcdefg"), max_size=4), max_size=7
)


@settings(max_examples=200, deadline=None)
@given(_EDGES)
def test_each_circle_is_a_real_closed_path_and_every_cycle_is_in_one(edges: dict[str, set[str]]) -> None:
    graph = {node: {t for t in targets if t != node} for node, targets in edges.items()}
    for targets in list(graph.values()):
        for target in targets:
            graph.setdefault(target, set())
    found = CHECK.circles(graph)
    for path in found:
        assert path[0] == path[-1] and len(path) > 2
        assert all(b in graph[a] for a, b in itertools.pairwise(path))

    # A node is on some cycle exactly when it reaches itself; each such node lies in one reported circle's
    # component, which is what the reachability both ways says.
    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph[node])
        return seen

    reachable = {node: reach(node) for node in graph}
    cyclic = {node for node in graph if node in reachable[node]}
    components = {frozenset(n for n in cyclic if n in reachable[m] and m in reachable[n]) for m in cyclic}
    assert len(found) == len(components)
    assert {path[0] for path in found} == {min(component) for component in components}


def test_config_is_a_leaf_that_imports_only_base_and_errors() -> None:
    """``load_config`` reads the file alone: config/ imports nothing of memsync but base/ and errors, and
    its row of the layer contract sits just above base/ (nothing but base/ and errors below it)."""
    graph = CHECK.import_graph(CHECK.load_modules(REPO_ROOT, "memsync"))
    outside = {
        (module, target)
        for module, targets in graph.items()
        if module == "memsync.config" or module.startswith("memsync.config.")
        for target in targets
        if target.split(".")[:2] not in (["memsync", "config"], ["memsync", "base"], ["memsync", "errors"])
    }
    assert outside == set()
    [contract] = CHECK.load_contracts(REPO_ROOT)
    assert contract.rows[-3:] == (("memsync.config",), ("memsync.base",), ("memsync.errors",))
