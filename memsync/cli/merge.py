"""``memsync merge-driver``: the merge driver as a (hidden) CLI command, for running it by hand.

git itself runs the lighter entry point :mod:`memsync.merge.driver` (registered by
:func:`memsync.merge.registration.driver_command`); both call
:func:`memsync.merge.driver.run_merge_driver`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.cli.app import app


@app.command("merge-driver", hidden=True)
def merge_driver(
    kind: Annotated[str, typer.Argument(help="Driver kind: entry, daily, index or jsonl.")],
    base: Annotated[Path, typer.Argument(help="The common ancestor's version (git's %O).")],
    ours: Annotated[Path, typer.Argument(help="This side's version, replaced by the result (git's %A).")],
    theirs: Annotated[Path, typer.Argument(help="The other side's version (git's %B).")],
    path: Annotated[str, typer.Argument(help="The file's path in the store, for messages (git's %P).")] = "",
) -> None:
    """Merge BASE, OURS and THEIRS with memsync's KIND driver and write the result into OURS.

    Exit 0 when merged; 1 when it failed, OURS left unchanged (git then reports a conflict).
    """
    from memsync.merge.driver import run_merge_driver

    raise typer.Exit(run_merge_driver(kind, base, ours, theirs, path or str(ours)))
