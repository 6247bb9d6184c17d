"""Only ``memsync/base/git.py`` starts git: no other module of the package calls subprocess or os.exec*/spawn*
with a "git" argument, and none imports GitPython (read from the package's syntax trees)."""

from __future__ import annotations

import ast

from tests.support.helpers import REPO_ROOT

PACKAGE = REPO_ROOT / "memsync"
RUNNER = PACKAGE / "base" / "git.py"
_OS_STARTERS = ("exec", "spawn", "posix_spawn")


def _names_git(node: ast.AST) -> bool:
    """True when a string constant in ``node`` is git's name or a path to it."""
    return any(
        isinstance(sub, ast.Constant)
        and isinstance(sub.value, str)
        and (sub.value == "git" or sub.value.endswith("/git"))
        for sub in ast.walk(node)
    )


def _starters(tree: ast.Module) -> set[str]:
    """Names bound in the module to subprocess's or os's process starters (``from subprocess import run``)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "os"):
            for alias in node.names:
                if node.module == "subprocess" or alias.name.startswith(_OS_STARTERS):
                    bound.add(alias.asname or alias.name)
    return bound


def _starts_process(call: ast.Call, bound: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in bound
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id == "subprocess":
            return True
        return func.value.id == "os" and func.attr.startswith(_OS_STARTERS)
    return False


def violations(source: str, name: str) -> list[str]:
    """Where module ``name`` (its ``source``) starts git itself or imports GitPython."""
    tree = ast.parse(source)
    bound = _starters(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{name}:{node.lineno}: imports GitPython"
                for alias in node.names
                if alias.name == "git" or alias.name.startswith("git.")
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module == "git" or node.module.startswith("git."):
                found.append(f"{name}:{node.lineno}: imports GitPython")
        elif (
            isinstance(node, ast.Call)
            and _starts_process(node, bound)
            and any(_names_git(arg) for arg in [*node.args, *(kw.value for kw in node.keywords)])
        ):
            found.append(f"{name}:{node.lineno}: starts git (use memsync.base.git)")
    return found


def test_only_the_runner_starts_git() -> None:
    modules = sorted(path for path in PACKAGE.rglob("*.py") if path != RUNNER)
    assert len(modules) > 50
    found = [
        problem
        for path in modules
        for problem in violations(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    ]
    assert found == []


def test_the_check_sees_each_way_of_starting_git() -> None:
    samples = {
        "import subprocess\nsubprocess.run(['git', 'status'])\n": "starts git",
        "import subprocess\nsubprocess.Popen(('git', *args), cwd=x)\n": "starts git",
        "from subprocess import check_output as co\nco(['/usr/bin/git', 'log'])\n": "starts git",
        "import os\nos.execvp('git', ['git', 'fetch'])\n": "starts git",
        "import subprocess\nsubprocess.run(args=['git', 'gc'])\n": "starts git",
        "import git\n": "imports GitPython",
        "from git import Repo\n": "imports GitPython",
        "import git.exc\n": "imports GitPython",
    }
    for source, problem in samples.items():
        assert [problem in line for line in violations(source, "m.py")] == [True], source
    harmless = (
        "import subprocess\nsubprocess.run(['systemctl', '--user', 'start', 'memsync'])\n"
        "from memsync import git\ngit.run(['status'], timeout=1)\n"
        "import shutil\nshutil.which('git')\n"
    )
    assert violations(harmless, "m.py") == []
