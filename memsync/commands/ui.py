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
import os
import secrets
import socket
import webbrowser
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from memsync.base.fsio import atomic_write
from memsync.base.layout import is_append_only
from memsync.base.paths import config_path
from memsync.commands.conflicts import Keep, conflicts, forks, resolve, split_versions
from memsync.commands.held import allow, held_lines
from memsync.commands.log import local_time
from memsync.commands.machines import machines
from memsync.commands.proposals import reviews_of
from memsync.commands.review import decide, my_decision
from memsync.commands.timeline import authors, timeline
from memsync.commands.ui_chart import commits_chart
from memsync.commands.undo import Change, Reinstate, Restore, Withdraw, undo
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import KINDS
from memsync.formats.quoted import neutralise, visible
from memsync.memoryfile.file import TEXT_MAX_CHARS, MemoryFile, NewEntry
from memsync.recall.search import recall, written
from memsync.tracks.resolve import load_stores
from memsync.tracks.tracked import locate, tracked_memory

LOOPBACK = "127.0.0.1"
_COOKIE = "memsync_ui"
_STYLE = (
    "body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem}"
    "nav a{margin-right:1rem}table{border-collapse:collapse;width:100%}"
    "td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere}th{overflow-wrap:normal}.fields th{width:8rem}nav a{white-space:nowrap}"
    "input,select,textarea,button{font:inherit;max-width:100%}textarea{width:100%;box-sizing:border-box}"
    "form{display:inline-block;margin:.2rem .4rem .2rem 0}.filters label{margin-right:.5rem}"
    ".err{color:#a00}.note{background:#eef6e8;padding:.4rem}.undo{float:right}"
    ".sides{display:flex;flex-wrap:wrap;gap:1rem}.side{flex:1 1 18rem;min-width:0}"
    "pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.4rem}"
    ".chart{width:100%;max-width:40rem;height:auto}form.wide{display:block}"
    "@media (max-width:40rem){td,th{font-size:13px}}"
)
_FILTERS = ("q", "kind", "host", "scope", "since", "until")


@dataclass(frozen=True)
class Secrets:
    """The session's ``token`` (in the printed URL) and ``csrf`` (in each form), and the ``origin`` a
    POST must come from (``http://127.0.0.1:PORT``)."""

    token: str
    csrf: str
    origin: str


_NAV = (
    ("/", "Memory"),
    ("/review", "Review"),
    ("/conflicts", "Conflicts"),
    ("/held", "Held back"),
    ("/machines", "Machines"),
)


def _page(title: str, body: str, *, note: str = "", csrf: str = "") -> HTMLResponse:
    """A whole page: the navigation, an undo button when ``csrf`` is given, ``note`` (the outcome of the
    last change, escaped), then ``body`` (HTML)."""
    e = html.escape
    links = "".join(f"<a href={href}>{name}</a>" for href, name in _NAV)
    undo = (
        f'<form method=post action=/undo class=undo><input type=hidden name=csrf value="{csrf}">'
        "<button id=undo>Undo last change</button></form>"
        if csrf
        else ""
    )
    shown = f"<p class=note id=note>{e(note)}</p>" if note else ""
    doc = (
        f"<!doctype html><html><head><meta charset=utf-8><title>memsync — {e(title)}</title>"
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_STYLE}</style></head><body><nav>{links}</nav>{undo}"
        f"<h1>{e(title)}</h1>{shown}{body}</body></html>"
    )
    return HTMLResponse(doc)


def _day(text: str) -> str:
    """The ``YYYY-MM-DD`` a date or time text starts with, ``""`` for none."""
    return text[:10] if len(text) >= 10 and text[4:5] == "-" else ""


def build_app(config_file: Path | None, keys: Secrets) -> Starlette:
    """The Starlette app of `memsync ui` for the config ``config_file`` (None: the default) guarded by
    ``keys``. Raises nothing at build time; a ``MemsyncError`` in a request is shown on the page. The
    last change made through the page is kept (in this process) for its undo."""
    e = html.escape
    last: list[Change] = []  # the change the undo button takes back, at most one

    def hidden(**fields: str) -> str:
        pairs = {"csrf": keys.csrf, **fields}
        return "".join(f'<input type=hidden name={name} value="{e(value)}">' for name, value in pairs.items())

    def page(title: str, body: str, request: Request) -> HTMLResponse:
        return _page(title, body, note=request.query_params.get("note", ""), csrf=keys.csrf if last else "")

    def done(where: str, line: str) -> RedirectResponse:
        return RedirectResponse(f"{where}{'&' if '?' in where else '?'}note={quote(line)}", status_code=303)

    async def memory(request: Request) -> Response:
        config = load_stores(config_file)
        q = {name: request.query_params.get(name, "").strip() for name in _FILTERS}
        kinds = "".join(
            f"<option{' selected' if kind == q['kind'] else ''}>{kind}</option>" for kind in ("", *KINDS)
        )
        parts = [
            "<form method=get action=/ class=filters>"
            f'<input type=text name=q value="{e(q["q"])}" aria-label=Search placeholder=Search>'
            f"<label>kind <select name=kind>{kinds}</select></label>"
            f'<label>host <input type=text name=host value="{e(q["host"])}" size=8></label>'
            f'<label>scope <input type=text name=scope value="{e(q["scope"])}" size=8></label>'
            f'<label>from <input type=date name=since value="{e(q["since"])}"></label>'
            f'<label>to <input type=date name=until value="{e(q["until"])}"></label>'
            "<button>Search</button></form>"
        ]

        def wanted(day: str, host: str) -> bool:
            return (
                (not q["since"] or day >= q["since"])
                and (not q["until"] or (bool(day) and day <= q["until"]))
                and (not q["host"] or host == q["host"])
            )

        if q["q"]:
            try:
                hits = recall(
                    config, q["q"], scope=q["scope"] or None, kinds=[q["kind"]] if q["kind"] else ()
                )
            except MemsyncError as exc:
                parts.append(f"<p class=err>{e(str(exc))}</p>")
                hits = []
            rows = "".join(
                "<tr><td>"
                + (
                    _entry_link(hit.doc.id, hit.text)
                    if hit.doc.type == "entry"
                    else _file_link(hit.doc.file, hit.text)
                    if hit.doc.type == "curated"
                    else e(hit.text)
                )
                + "</td>"
                f"<td>{e(hit.doc.kind or '')}</td><td>{e(str(hit.doc.file))}</td><td>{e(hit.host)}</td>"
                f"<td>{e(hit.date)}</td></tr>"
                for hit in hits
                if wanted(_day(hit.date), hit.host)
            )
            parts.append(
                "<table id=hits><tr><th>text</th><th>kind</th><th>file</th><th>host</th><th>date</th></tr>"
                f"{rows}</table>"
            )
        else:
            found: list[str] = []
            for item in tracked_memory(config):
                if item.format != "jsonl" or not item.live.is_file():
                    continue
                hosts = authors(config_file, item)
                found.extend(
                    f"<tr><td>{_entry_link(entry.id, entry.text)}</td><td>{e(entry.kind)}</td>"
                    f"<td>{e(entry.scope)}</td><td>{e(hosts.get(entry.id, config.host))}</td>"
                    f'<td title="{e(str(item.live))}">{e(item.store_path or item.live.name)}</td>'
                    f"<td>{e(entry.created_at)}</td></tr>"
                    for entry in MemoryFile(item.live).view()
                    if (not q["kind"] or entry.kind == q["kind"])
                    and (not q["scope"] or entry.scope == q["scope"])
                    and wanted(_day(entry.created_at), hosts.get(entry.id, config.host))
                )
            parts.append(
                "<h2>Entries</h2><table id=entries><tr><th>text</th><th>kind</th><th>scope</th><th>host</th>"
                f"<th>file</th><th>created</th></tr>{''.join(found)}</table>"
            )
        tracked = "".join(
            f"<tr><td>{e(item.store or '—')}</td><td>{e(item.store_path or '')}</td>"
            f"<td>{e(str(item.live))}</td><td>{e(item.format)}</td><td>"
            # A role's curated entries and index, each opened for an edit.
            + (
                " ".join(_file_link(path, path.name) for path in sorted(item.live.glob("*.md")))
                if item.format == "role"
                else ""
            )
            + "</td></tr>"
            for item in tracked_memory(config)
        )
        parts.append(
            "<h2>Tracked memory</h2><table><tr><th>store</th><th>store path</th><th>live path</th>"
            f"<th>format</th><th>files</th></tr>{tracked}</table>"
        )
        return page("Memory", "".join(parts), request)

    async def entry_page(request: Request) -> Response:
        entry_id = request.query_params.get("id", "")
        found = timeline(config_file, entry_id)
        if found is None:
            return page(
                "Entry", f"<p class=err>No tracked memory file holds entry {e(entry_id)}.</p>", request
            )
        entry = found.entry
        state = "forgotten" if found.forgotten else "superseded" if found.superseded_by else "live"
        fields = [
            ("id", e(entry.id)),
            ("state", state),
            ("kind", e(entry.kind)),
            ("scope", e(entry.scope)),
            ("tags", e(", ".join(entry.tags))),
            ("source", e(entry.source or "")),
            ("confidence", e("" if entry.confidence is None else str(entry.confidence))),
            ("created", e(entry.created_at)),
            ("expires", e(entry.expires_at or "")),
            ("file", e(f"{found.file}" + (f" [{found.store}]" if found.store else ""))),
            ("supersedes", _entry_link(entry.supersedes, entry.supersedes) if entry.supersedes else ""),
            ("superseded by", " ".join(_entry_link(i, i) for i in found.superseded_by)),
        ]
        table = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in fields)
        events = "".join(
            f"<tr><td>{event.change.what}</td>"
            f"<td>{e(local_time(event.when)) if event.when else 'not synced yet'}</td>"
            f"<td>{e(event.host or 'this machine')}</td>"
            f"<td>{e(str(event.change.record.get('source') or ''))}</td><td>{e(event.change.handoff)}</td>"
            f"<td>{_entry_link(str(event.change.record.get('id')), str(event.change.record.get('text', '')))}"
            "</td></tr>"
            for event in found.events
        )
        actions = ""
        if state == "live":
            actions = (
                f"<form method=post action=/entry/supersede class=wide>{hidden(id=entry.id)}"
                '<textarea name=text rows=3 required aria-label="New text">'
                f"{e(visible(entry.text))}</textarea>"
                "<button id=supersede>Supersede</button></form>"
                f"<form method=post action=/entry/forget>{hidden(id=entry.id)}"
                "<button id=forget>Forget</button></form>"
            )
        body = (
            f"<p class=text id=text>{_text(entry.text)}</p><table class=fields>{table}</table>{actions}"
            "<h2>Timeline</h2><table id=timeline><tr><th>what</th><th>when</th><th>host</th><th>agent</th>"
            f"<th>handoff from</th><th>entry</th></tr>{events}</table>"
        )
        return page("Entry", body, request)

    async def entry_change(request: Request) -> Response:
        form = await request.form()
        entry_id = str(form.get("id", ""))
        config = load_stores(config_file)
        found = timeline(config_file, entry_id)
        if found is None:
            raise MemsyncError(f"ui: no tracked memory file holds entry {entry_id}. Reload the page")
        memory = MemoryFile(found.file)
        if request.url.path.endswith("/forget"):
            memory.forget(entry_id)
            last[:] = [Reinstate("forget", found.file, found.entry)]
            line = f"forgot {entry_id}"
            # Forgetting one superseder of a fork goes back to the list of forks.
            target = "/conflicts" if form.get("back") == "/conflicts" else f"/entry?id={quote(entry_id)}"
        else:
            new = memory.remember(NewEntry(str(form.get("text", "")).strip(), supersedes=entry_id))
            last[:] = [Reinstate("supersede", found.file, found.entry, drop=new.id)]
            line = f"{new.id} supersedes {entry_id}"
            target = f"/entry?id={quote(new.id)}"
        written(config, found.file)
        return done(target, line)

    async def file_page(request: Request) -> Response:
        path = _whole_file(config_file, request.query_params.get("path", ""))
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        body = (
            f"<p>{e(str(path))}</p><form method=post action=/file class=wide>{hidden(path=str(path))}"
            f'<textarea name=text rows=20 aria-label="Content" id=content>{e(text)}</textarea>'
            "<button id=save>Save</button></form>"
        )
        return page("Edit", body, request)

    async def file_save(request: Request) -> Response:
        form = await request.form()
        path = _whole_file(config_file, str(form.get("path", "")))
        before = path.read_bytes()
        after = str(form.get("text", "")).replace("\r\n", "\n").encode("utf-8", "surrogateescape")
        atomic_write(path, after)
        last[:] = [Restore("edit", path, before, after)]
        return done(f"/file?path={quote(str(path))}", f"saved {path}; it syncs as an edit")

    async def conflicts_page(request: Request) -> Response:
        rows = []
        for item in conflicts(config_file or config_path()):
            path = Path(item.file)
            versions = (
                split_versions(path.read_bytes().decode("utf-8", "surrogateescape"))
                if path.is_file()
                else None
            )
            if versions is None:
                continue
            sides = "".join(
                f"<div class=side><h3>{number}: {e(label)}</h3><pre>{e(text)}</pre>"
                f"<form method=post action=/conflicts/resolve>{hidden(file=item.file, keep=number)}"
                f'<button id="keep-{number}-{e(path.name)}">Keep this one</button></form></div>'
                for number, label, text in (
                    ("1", item.labels[0], versions.first),
                    ("2", item.labels[1], versions.second),
                )
            )
            rows.append(
                f"<section class=conflict><h2>{e(item.file)} [{e(item.store)}]</h2>"
                f"<div class=sides>{sides}</div>"
                f"<form method=post action=/conflicts/resolve>{hidden(file=item.file, keep='both')}"
                f'<button id="keep-both-{e(path.name)}">Keep both</button></form> '
                f'<a href="/file?path={quote(item.file)}">Edit</a></section>'
            )
        for fork in forks(config_file or config_path()):
            sides = "".join(
                f"<div class=side><h3>{e(label)}</h3>"
                f"<form method=post action=/entry/forget>{hidden(id=entry_id, back='/conflicts')}"
                f'<button id="forget-{e(entry_id)}">Forget this one</button></form></div>'
                for entry_id, label in zip(fork.ids, fork.labels, strict=True)
            )
            rows.append(
                f"<section class=fork><h2>{e(fork.file)} [{e(fork.store)}]</h2>"
                f"<p>Entry {_entry_link(fork.superseded, fork.superseded)} was superseded on two machines "
                f"at once: {len(fork.ids)} entries replace it. Forget the wrong one.</p>"
                f"<div class=sides>{sides}</div></section>"
            )
        return page("Conflicts", "".join(rows) or "<p>No file holds two kept versions.</p>", request)

    async def conflicts_resolve(request: Request) -> Response:
        form = await request.form()
        keep = str(form.get("keep", ""))
        if keep not in ("1", "2", "both"):
            raise MemsyncError(f"ui: keep {keep!r} is not 1, 2 or both. Reload the page")
        path = _whole_file(config_file, str(form.get("file", "")))
        before = path.read_bytes()
        line = resolve(path, cast(Keep, keep))
        last[:] = [Restore("resolve", path, before, path.read_bytes())]
        return done("/conflicts", line)

    async def held_page(request: Request) -> Response:
        rows = "".join(
            f"<tr><td>{e(str(item.file))}:{item.line}</td><td>{e(item.detector)}</td>"
            f"<td><code>{e(item.text)}</code></td><td>"
            + (
                f"<form method=post action=/held/allow>{hidden(file=str(item.file), line=str(item.line))}"
                f'<button id="allow-{item.line}-{e(item.file.name)}">Not a secret</button></form>'
                if item.line
                else "its name"
            )
            + "</td></tr>"
            for item in held_lines(config_file)
        )
        body = (
            "<p>Lines the secret scanner keeps on this machine; they are shown here only. "
            "“Not a secret” syncs the line's hash, never its text, so peers let it pass too.</p>"
            "<table id=held><tr><th>line</th><th>detector</th><th>text</th><th></th></tr>"
            f"{rows}</table>"
            if rows
            else "<p>No line is held back.</p>"
        )
        return page("Held back", body, request)

    async def held_allow(request: Request) -> Response:
        form = await request.form()
        line = str(form.get("line", ""))
        if not line.isdigit():
            raise MemsyncError(f"ui: line {line!r} is no line number. Reload the page")
        return done("/held", allow(config_file, Path(str(form.get("file", ""))), int(line)))

    async def machines_page(request: Request) -> Response:
        found = machines(config_file)
        rows = "".join(
            f"<tr><td>{e(m.store)}</td><td>{e(m.host)}</td><td>{e(local_time(m.when))}<br>"
            f"<code>{e(m.sha[:10])}</code> {e(m.subject)}</td><td>{m.not_pulled}</td></tr>"
            for m in found
        )
        charts = "".join(
            f"<h2>Commits per day: {e(store)}</h2>"
            + commits_chart({m.host: m.per_day for m in found if m.store == store})
            for store in dict.fromkeys(m.store for m in found)
        )
        body = (
            "<table id=machines><tr><th>store</th><th>host</th><th>last commit</th>"
            f"<th>commits it had not pulled</th></tr>{rows}</table>{charts}"
            if found
            else "<p>No commit yet.</p>"
        )
        return page("Machines", body, request)

    async def undo_last(request: Request) -> Response:
        if not last:
            return done("/", "nothing to undo")
        line = undo(load_stores(config_file), last.pop())
        # Back to the page the button was on, without its token or its earlier note.
        came = urlsplit(request.headers.get("referer", ""))
        query = urlencode([(k, v) for k, v in parse_qsl(came.query) if k not in ("token", "note")])
        return done(f"{came.path or '/'}{'?' + query if query else ''}", line)

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
                    action = (
                        f"<form method=post action=/review/approve>{hidden(id=proposal.id)}"
                        f'<button id="approve-{pid}">Approve</button></form>'
                        f"<form method=post action=/review/reject>{hidden(id=proposal.id)}"
                        '<input type=text name=why required aria-label="Why">'
                        f'<button id="reject-{pid}">Reject</button></form>'
                    )
                else:
                    action = e(f"{outcome.verdict} by {outcome.by} on {outcome.host} at {outcome.at}")
                    action += e(f" ({outcome.why})") if outcome.why else ""
                rows.append(
                    f"<tr id=p-{pid}><td>{_text(proposal.entry.text)}</td>"
                    f"<td>{e(store.name)}:{e(proposal.file)}</td><td>{e(proposal.host)}<br>{e(proposal.at)}</td><td>{action}</td></tr>"
                )
        parts.append(
            "<table><tr><th>proposal</th><th>file</th><th>from</th><th>decision</th></tr>"
            + "".join(rows)
            + "</table>"
            if rows
            else "<p>No proposal.</p>"
        )
        return page("Review", "".join(parts), request)

    async def decision(request: Request) -> Response:
        form = await request.form()
        verdict = "approved" if request.url.path.endswith("/approve") else "rejected"
        proposal = str(form.get("id", ""))
        try:
            line = decide(config_file, proposal, verdict, str(form.get("why", "")))
        except MemsyncError as exc:
            return RedirectResponse(f"/review?error={quote(str(exc))}", status_code=303)
        last[:] = [Withdraw(verdict[:-1], proposal, my_decision(config_file, proposal))]
        return done("/review", line)

    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        # The Host header: a page on another site cannot reach this server through a DNS name of its own.
        if request.headers.get("host", "") != keys.origin.removeprefix("http://"):
            return PlainTextResponse("forbidden: not addressed to the loopback URL", status_code=403)
        given = request.query_params.get("token") or request.cookies.get(_COOKIE, "")
        if not hmac.compare_digest(given, keys.token):
            return PlainTextResponse("forbidden: open the URL `memsync ui` printed", status_code=403)
        if request.method != "GET":
            if request.method != "POST" or request.headers.get("origin") != keys.origin:
                return PlainTextResponse("forbidden: a change must come from this page", status_code=403)
            await request.body()  # kept: the route reads the same body again
            form = await request.form()
            if not hmac.compare_digest(str(form.get("csrf", "")), keys.csrf):
                return PlainTextResponse("forbidden: missing or wrong CSRF token", status_code=403)
        try:
            response = await call_next(request)
        except MemsyncError as exc:
            response = _page("Error", f"<p class=err id=error>{e(str(exc))}</p>")
            response.status_code = 409
        response.set_cookie(_COOKIE, keys.token, httponly=True, samesite="strict")
        response.headers["Content-Security-Policy"] = "default-src 'self'; style-src 'unsafe-inline'"
        response.headers["X-Frame-Options"] = "DENY"
        # Not no-referrer: under it a browser sends "Origin: null" with its own form posts.
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    return Starlette(
        routes=[
            Route("/", memory),
            Route("/entry", entry_page),
            Route("/entry/forget", entry_change, methods=["POST"]),
            Route("/entry/supersede", entry_change, methods=["POST"]),
            Route("/file", file_page),
            Route("/file", file_save, methods=["POST"]),
            Route("/conflicts", conflicts_page),
            Route("/conflicts/resolve", conflicts_resolve, methods=["POST"]),
            Route("/held", held_page),
            Route("/held/allow", held_allow, methods=["POST"]),
            Route("/machines", machines_page),
            Route("/undo", undo_last, methods=["POST"]),
            Route("/review", review),
            Route("/review/approve", decision, methods=["POST"]),
            Route("/review/reject", decision, methods=["POST"]),
        ],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)],
    )


def _text(text: str) -> str:
    """Peer content ``text`` (an entry's, a proposal's) as HTML: ``neutralise``d as everywhere memsync
    shows it (no control or bidi characters, markup quoted; not cut), then escaped."""
    return html.escape(neutralise(text, TEXT_MAX_CHARS))


def _entry_link(entry_id: str, text: str) -> str:
    return f'<a href="/entry?id={quote(entry_id)}">{_text(text)}</a>'


def _file_link(path: Path, text: str) -> str:
    return f'<a href="/file?path={quote(str(path))}">{html.escape(text)}</a>'


def _whole_file(config_file: Path | None, given: str) -> Path:
    """The live whole file ``given`` names, when a track of config file ``config_file`` maps it (a
    curated entry, an index, a note: never an append-only file, never a path outside the tracks).
    Raises ``MemsyncError`` otherwise."""
    path = Path(os.path.abspath(given))
    found = locate(load_stores(config_file), path)
    if found is None or is_append_only(found[1]) or not path.is_file():
        raise MemsyncError(f"ui: {given} is no whole file of tracked memory. Pick one from the pages")
    return path


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
