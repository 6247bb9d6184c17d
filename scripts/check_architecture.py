"""Check the architecture of the memsync package from its source, with the standard library only.

    python scripts/check_architecture.py [--root DIR] [--figures]

Findings, one line each, exit 1 when there is any (exit 0 when there is none):
- an import circle between modules of the package, counting every import: at module level, under
  `if TYPE_CHECKING:` and inside functions (a circle closed only lazily is still a circle of concepts);
- more than 4 modules at the package root;
- a forwarder: a function whose whole body calls another function with its own arguments, unchanged;
- an import-linter layers contract of more than 15 rows, or a module that no row covers.

`--figures` prints the figures the architecture is measured by instead, and exits 0: modules, root
modules, forwarders, circles, contract rows, lines of code, the median and 90th percentile of module
and function sizes (in physical lines). `--root` is the repository (its `pyproject.toml` and package);
by default the one holding this script.
"""

from __future__ import annotations

import argparse
import ast
import math
import statistics
import sys
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_ROOT_MODULES = 4
MAX_CONTRACT_ROWS = 15


@dataclass(frozen=True)
class Module:
    """One module of the package: its dotted name, its file, its parsed tree and its length in lines."""

    name: str
    path: Path
    tree: ast.Module
    lines: int

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


@dataclass(frozen=True)
class Contract:
    """One import-linter layers contract: its name and its rows, each row the module names it lists."""

    name: str
    rows: tuple[tuple[str, ...], ...]


def load_modules(root: Path, package: str) -> dict[str, Module]:
    """Every `.py` file under `root/package`, parsed, by dotted module name.

    Raises SyntaxError for a file Python cannot parse (the tree is not checked then).
    """
    modules: dict[str, Module] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        modules[".".join(parts)] = Module(".".join(parts), path, tree, len(text.splitlines()))
    return modules


def _imported_names(module: Module) -> Iterator[str]:
    """The absolute dotted names every import statement of `module` names, wherever the statement is."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # A relative import counts from the module's package (an __init__ is its own package).
                anchor = module.name.split(".")
                if not module.is_package:
                    anchor = anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Which modules of the package each module imports (itself excluded).

    A name resolves to the longest module it starts with: `from memsync.store import facade` is an import
    of `memsync.store.facade`, `from memsync.store import Store` one of `memsync.store`.
    """
    graph: dict[str, set[str]] = {}
    for name, module in modules.items():
        targets: set[str] = set()
        for imported in _imported_names(module):
            parts = imported.split(".")
            for end in range(len(parts), 0, -1):
                candidate = ".".join(parts[:end])
                if candidate in modules:
                    targets.add(candidate)
                    break
        targets.discard(name)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: one per strongly connected component of more than one module.

    Each is given as one closed path through the component, starting at its first module by name, so a
    reader sees a real chain of imports (a -> b -> c -> a), not only the set.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    # Tarjan's algorithm, iterative: a package's import chains are deeper than Python's recursion limit allows
    # comfortably.
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted((_closed_path(graph, set(c), c[0]) for c in components), key=lambda path: path[0])


def _closed_path(graph: dict[str, set[str]], members: set[str], start: str) -> list[str]:
    """A shortest path inside `members` from `start` back to `start` (breadth first)."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f"{start} is in a strongly connected component but no path returns to it")


def _functions(tree: ast.AST) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """Every function of `tree`, nested ones included, each with whether it is a method of a class."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item, True
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and not isinstance(
                node, ast.ClassDef
            ):
                yield child, False


def _decorator_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names: set[str] = set()
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(ast.unparse(target))
    return names


def _dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as `["a", "b", "c"]`; None for any other expression (a call's result, a literal)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else [*head, node.attr]
    return None


def _is_bare_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and not node.args and not node.keywords and _dotted(node.func) is not None
    )


def is_forwarder(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> bool:
    """Whether the whole body of `function` (its docstring aside) is one call of another function, named
    by a dotted name, that passes the function's own parameters on, each once, unchanged:
    `return f(a, b=b)`, `f(*args, **kwargs)`, `return await mod.f(a)`. A method's receiver (`self`,
    `cls`) may be passed on itself or as one of its attributes (`self._g`), hold the callee
    (`self._g.f(a)`), or be left out.

    Not a forwarder: a decorated function (the decorator registers or changes it: a typer command, a
    property), except under `staticmethod` and `classmethod`; a function whose parameters carry
    `Annotated` metadata (its signature declares an interface, such as an MCP tool's schema); a call of
    `replace` (a new value built, not a call passed on); a dunder method (a protocol implemented). Calls
    that take nothing before the forwarded one (`self._require()`, a check) do not count.
    """
    decorators = _decorator_names(function)
    if decorators - {"staticmethod", "classmethod"}:
        return False
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    if any(
        a is not None and a.annotation is not None and "Annotated[" in ast.unparse(a.annotation)
        for a in every
    ):
        return False
    if function.name.startswith("__") and function.name.endswith("__"):
        return False
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    # Checks before the call that take nothing (`self._require()`) do not make it more than a forwarder.
    while len(body) > 1 and isinstance(body[0], ast.Expr) and _is_bare_call(body[0].value):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr) or body[0].value is None:
        return False
    call = body[0].value
    if isinstance(call, ast.Await):
        call = call.value
    if not isinstance(call, ast.Call):
        return False
    callee = _dotted(call.func)
    if callee is None or callee[-1] == "replace":
        return False
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        params.append("*" + args.vararg.arg)
    if args.kwarg:
        params.append("**" + args.kwarg.arg)
    receiver = params.pop(0) if method and params and "staticmethod" not in decorators else None
    if callee == [function.name]:
        return False  # recursion, not a forwarder
    passed: list[str] = []
    for arg in call.args:
        value = arg.value if isinstance(arg, ast.Starred) else arg
        dotted = _dotted(value)
        if dotted is None or (len(dotted) > 1 and dotted[0] != receiver):
            return False
        if dotted[0] == receiver:
            continue  # the receiver, or what it holds
        passed.append(("*" if isinstance(arg, ast.Starred) else "") + dotted[0])
    for keyword in call.keywords:
        if not isinstance(keyword.value, ast.Name):
            return False
        if keyword.arg is None:
            passed.append("**" + keyword.value.id)
        elif keyword.arg == keyword.value.id:
            passed.append(keyword.arg)
        else:
            return False
    return sorted(passed) == sorted(params) and len(set(passed)) == len(passed)


def forwarders(modules: dict[str, Module]) -> list[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every forwarder of the package (see `is_forwarder`), in file and line order."""
    found = [
        (module, function)
        for module in modules.values()
        for function, method in _functions(module.tree)
        if is_forwarder(function, method)
    ]
    return sorted(found, key=lambda item: (item[0].name, item[1].lineno))


def load_contracts(root: Path) -> list[Contract]:
    """The import-linter layers contracts of `root/pyproject.toml` (none when it has none).

    A row's modules are split at `|` (independent) and `:` (siblings); an optional module's parentheses
    and the contract's `containers` are resolved, so each name is absolute.
    """
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return []
    settings = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    contracts = settings.get("tool", {}).get("importlinter", {}).get("contracts", [])
    found: list[Contract] = []
    for contract in contracts:
        if contract.get("type") != "layers":
            continue
        containers = contract.get("containers") or [""]
        rows: list[tuple[str, ...]] = []
        for row in contract.get("layers", []):
            names = [n.strip().strip("()").strip() for n in row.replace(":", "|").split("|")]
            rows.append(tuple(f"{c}.{n}" if c else n for c in containers for n in names if n and n != "..."))
        found.append(Contract(contract.get("name", "layers"), tuple(rows)))
    return found


def uncovered(modules: dict[str, Module], contracts: Sequence[Contract], package: str) -> list[str]:
    """The modules of the package (its root `__init__` aside) that no row of any layers contract names,
    itself or through a package that holds it."""
    named = {name for contract in contracts for row in contract.rows for name in row}
    return [
        module
        for module in sorted(modules)
        if module != package and not any(module == n or module.startswith(n + ".") for n in named)
    ]


def root_modules(modules: dict[str, Module], package: str) -> list[str]:
    """The modules directly in the package's folder (its `__init__` included), not in a sub-package."""
    return sorted(
        name
        for name, module in modules.items()
        if module.path.parent.name == package and name.count(".") <= 1
    )


def findings(root: Path, package: str) -> list[str]:
    """One line per breach of the architecture's rules in the tree at `root` (empty when it keeps them)."""
    modules = load_modules(root, package)
    lines = [f"circle: {' -> '.join(path)}" for path in circles(import_graph(modules))]
    at_root = root_modules(modules, package)
    if len(at_root) > MAX_ROOT_MODULES:
        listed = ", ".join(at_root)
        lines.append(
            f"root: {len(at_root)} modules at the package root (at most {MAX_ROOT_MODULES}): {listed}"
        )
    for module, function in forwarders(modules):
        lines.append(
            f"forwarder: {module.path.relative_to(root)}:{function.lineno} {function.name} only passes its "
            "arguments on"
        )
    contracts = load_contracts(root)
    if not contracts:
        lines.append("contract: pyproject.toml has no import-linter layers contract")
    for contract in contracts:
        if len(contract.rows) > MAX_CONTRACT_ROWS:
            lines.append(
                f"contract: {contract.name!r} has {len(contract.rows)} rows (at most {MAX_CONTRACT_ROWS})"
            )
    lines.extend(
        f"uncovered: {name} is in no row of the layers contract"
        for name in uncovered(modules, contracts, package)
    )
    return lines


def _p90(values: Sequence[int]) -> int:
    """The 90th percentile by nearest rank: the smallest value at least 90% of `values` do not exceed."""
    ordered = sorted(values)
    return ordered[math.ceil(0.9 * len(ordered)) - 1]


def figures(root: Path, package: str) -> list[str]:
    """The architecture's figures for the tree at `root`, one `name: value` line each."""
    modules = load_modules(root, package)
    module_sizes = [m.lines for m in modules.values()]
    function_sizes = [
        (f.end_lineno or f.lineno) - f.lineno + 1 for m in modules.values() for f, _ in _functions(m.tree)
    ]
    contracts = load_contracts(root)
    return [
        f"modules: {len(modules)}",
        f"root modules: {len(root_modules(modules, package))}",
        f"functions: {len(function_sizes)}",
        f"forwarders: {len(forwarders(modules))}",
        f"circles: {len(circles(import_graph(modules)))}",
        f"contract rows: {sum(len(c.rows) for c in contracts)}",
        f"uncovered modules: {len(uncovered(modules, contracts, package))}",
        f"lines of code: {sum(module_sizes)}",
        f"module size median: {statistics.median(module_sizes):g}",
        f"module size p90: {_p90(module_sizes)}",
        f"function size median: {statistics.median(function_sizes):g}",
        f"function size p90: {_p90(function_sizes)}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the findings (exit 1 if any) or, with `--figures`, the figures (exit 0)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--package", default="memsync")
    parser.add_argument("--figures", action="store_true", help="print the figures instead of the findings")
    options = parser.parse_args(argv)
    if options.figures:
        print("\n".join(figures(options.root, options.package)))
        return 0
    lines = findings(options.root, options.package)
    if lines:
        print("\n".join(lines))
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
