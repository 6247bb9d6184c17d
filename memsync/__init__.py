"""memsync: keep AI-agent memory in sync between machines, people and agents through git."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memsync")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
