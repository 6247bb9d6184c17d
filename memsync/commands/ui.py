"""`memsync ui`: a local web page to look at memory and review proposals, on 127.0.0.1 only.

Every request needs the random token printed with the URL (then kept in a same-site cookie), else 403;
the Host header must name the loopback address (no DNS rebinding). A state-changing request is a POST
from the page's own origin carrying the page's CSRF token, else 403. The HTML is rendered here, with
every value escaped; nothing is fetched from outside (a Content-Security-Policy of 'self' says so).
Approve and reject go through :func:`memsync.commands.review.decide`, as on the CLI.
"""

from __future__ import annotations

import hmac
import html
import secrets
import socket
import webbrowser
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from memsync.commands.proposals import reviews_of
from memsync.commands.review import decide
from memsync.config import load_stores
from memsync.errors import MemsyncError
from memsync.recall.search import recall
from memsync.tracked import tracked_memory

LOOPBACK = "127.0.0.1"
_COOKIE = "memsync_ui"
_STYLE = (
    "body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem}"
    "nav a{margin-right:1rem}table{border-collapse:collapse;width:100%}"
    "td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top;"
    "word-break:break-word}"
    "input[type=text]{width:60%}.err{color:#a00}"
)


@dataclass(frozen=True)
class Secrets:
    """The session's ``token`` (in the printed URL) and ``csrf`` (in each form), and the ``origin`` a
    POST must come from (``http://127.0.0.1:PORT``)."""

    token: str
    csrf: str
    origin: str


def _page(title: str, body: str) -> HTMLResponse:
    doc = (
        f"<!doctype html><html><head><meta charset=utf-8><title>memsync — {html.escape(title)}</title>"
        f'<meta name="viewport" content="width=device-width">'
        f"<style>{_STYLE}</style></head><body><nav><a href=/>Memory</a><a href=/review>Review</a></nav>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(doc)


def build_app(config_file: Path | None, keys: Secrets) -> Starlette:
    """The Starlette app of `memsync ui` for the config ``config_file`` (None: the default) guarded by
    ``keys``. Raises nothing at build time; a ``MemsyncError`` in a request is shown on the page."""
    e = html.escape

    async def memory(request: Request) -> Response:
        config = load_stores(config_file)
        query = request.query_params.get("q", "").strip()
        rows = "".join(
            f"<tr><td>{e(item.store or '—')}</td><td>{e(item.store_path or '')}</td>"
            f"<td>{e(str(item.live))}</td><td>{e(item.format)}</td></tr>"
            for item in tracked_memory(config)
        )
        parts = [
            f'<form method=get action=/><input type=text name=q value="{e(query)}" aria-label=Search>'
            "<button>Search</button></form>"
        ]
        if query:
            try:
                hits = recall(config, query)
            except MemsyncError as exc:
                parts.append(f"<p class=err>{e(str(exc))}</p>")
                hits = []
            parts.append(
                "<table id=hits><tr><th>text</th><th>kind</th><th>file</th><th>host</th><th>date</th></tr>"
                + "".join(
                    f"<tr><td>{e(hit.text)}</td><td>{e(hit.doc.kind or '')}</td>"
                    f"<td>{e(str(hit.doc.file))}</td><td>{e(hit.host)}</td><td>{e(hit.date)}</td></tr>"
                    for hit in hits
                )
                + "</table>"
            )
        parts.append(
            "<h2>Tracked memory</h2><table><tr><th>store</th><th>store path</th><th>live path</th>"
            f"<th>format</th></tr>{rows}</table>"
        )
        return _page("Memory", "".join(parts))

    async def review(request: Request) -> Response:
        config = load_stores(config_file)
        error = request.query_params.get("error", "")
        parts = [f"<p class=err>{e(error)}</p>"] if error else []
        rows = []
        for store in config.stores.values():
            for item in reviews_of(store):
                proposal, outcome = item.proposal, item.outcome
                pid = e(proposal.id)
                if outcome is None:
                    hidden = (
                        f'<input type=hidden name=csrf value="{keys.csrf}">'
                        f'<input type=hidden name=id value="{pid}">'
                    )
                    action = (
                        f"<form method=post action=/review/approve>{hidden}"
                        f'<button id="approve-{pid}">Approve</button></form>'
                        f"<form method=post action=/review/reject>{hidden}"
                        '<input type=text name=why required aria-label="Why">'
                        f'<button id="reject-{pid}">Reject</button></form>'
                    )
                else:
                    action = e(f"{outcome.verdict} by {outcome.by} on {outcome.host} at {outcome.at}")
                    action += e(f" ({outcome.why})") if outcome.why else ""
                rows.append(
                    f"<tr id=p-{pid}><td>{e(proposal.text)}</td><td>{e(store.name)}:{e(proposal.file)}</td>"
                    f"<td>{e(proposal.host)}<br>{e(proposal.at)}</td><td>{action}</td></tr>"
                )
        parts.append(
            "<table><tr><th>proposal</th><th>file</th><th>from</th><th>decision</th></tr>"
            + "".join(rows)
            + "</table>"
            if rows
            else "<p>No proposal.</p>"
        )
        return _page("Review", "".join(parts))

    async def decision(request: Request) -> Response:
        form = await request.form()
        if not hmac.compare_digest(str(form.get("csrf", "")), keys.csrf):
            return PlainTextResponse("forbidden: missing or wrong CSRF token", status_code=403)
        verdict = "approved" if request.url.path.endswith("/approve") else "rejected"
        try:
            decide(config_file, str(form.get("id", "")), verdict, str(form.get("why", "")))
        except MemsyncError as exc:
            return RedirectResponse(f"/review?error={quote(str(exc))}", status_code=303)
        return RedirectResponse("/review", status_code=303)

    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        # The Host header: a page on another site cannot reach this server through a DNS name of its own.
        if request.headers.get("host", "") != keys.origin.removeprefix("http://"):
            return PlainTextResponse("forbidden: not addressed to the loopback URL", status_code=403)
        given = request.query_params.get("token") or request.cookies.get(_COOKIE, "")
        if not hmac.compare_digest(given, keys.token):
            return PlainTextResponse("forbidden: open the URL `memsync ui` printed", status_code=403)
        if request.method != "GET" and (
            request.method != "POST" or request.headers.get("origin") != keys.origin
        ):
            return PlainTextResponse("forbidden: a change must come from this page", status_code=403)
        response = await call_next(request)
        response.set_cookie(_COOKIE, keys.token, httponly=True, samesite="strict")
        response.headers["Content-Security-Policy"] = "default-src 'self'; style-src 'unsafe-inline'"
        response.headers["X-Frame-Options"] = "DENY"
        # Not no-referrer: under it a browser sends "Origin: null" with its own form posts.
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    return Starlette(
        routes=[
            Route("/", memory),
            Route("/review", review),
            Route("/review/approve", decision, methods=["POST"]),
            Route("/review/reject", decision, methods=["POST"]),
        ],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)],
    )


def serve(config_file: Path | None, port: int, *, browser: bool, say: Callable[[str], None]) -> None:
    """Run `memsync ui` on 127.0.0.1:``port`` (0: a free one) until interrupted: ``say`` the URL with
    its token, open it in a browser when ``browser``. Raises ``MemsyncError`` when the port is taken."""
    import uvicorn  # installed with the MCP SDK; only this command needs it

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
        sock.listen(128)  # before the URL is printed: a request that follows at once waits, not refused
    except OSError as exc:
        sock.close()
        raise MemsyncError(
            f"ui: cannot listen on {LOOPBACK}:{port}: {exc.strerror}. Pick another --port, or leave it out"
        ) from None
    origin = f"http://{LOOPBACK}:{sock.getsockname()[1]}"
    keys = Secrets(secrets.token_urlsafe(24), secrets.token_urlsafe(24), origin)
    url = f"{origin}/?token={keys.token}"
    say(f"memsync ui: {url}")
    if browser:
        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(build_app(config_file, keys), log_level="warning"))
    server.run(sockets=[sock])
