"""CLI: `memsync ui`."""

from __future__ import annotations

from typing import Annotated

import typer

from memsync.cli.app import app
from memsync.cli.sync import ConfigOption


@app.command("ui")
def ui_command(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (default 0: a free one).")
    ] = 0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the URL only.")] = False,
    config: ConfigOption = None,
) -> int:
    """Look at memory and review proposals in a local web page (127.0.0.1 only), until Ctrl-C.

    Prints the URL with a random token; a request without it is refused."""
    from memsync.commands.ui import serve

    serve(config, port, browser=not no_browser, say=lambda line: typer.echo(line))
    return 0
