"""memsync: keep AI-agent memory in sync between machines, people and agents through git."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # Computed on first use: importlib.metadata costs ~30 ms, and git starts the merge driver (which
    # imports this package) once per merged file.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("memsync")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0.0.0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
