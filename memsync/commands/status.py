"""`memsync status`: what each store of a config holds and how its last cycles went, read from the status
file the last cycle wrote and from the store itself (DESIGN "One sync cycle"; I6: held-back secrets named).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memsync.base.paths import StoreLayout
from memsync.base.remote_url import redacted
from memsync.base.wording import plural
from memsync.commands.detect import untracked_hosts
from memsync.cycle.status import read_status
from memsync.cycle.store_facts import emptied_folders, live_path, store_facts
from memsync.daemon.instance import running_daemon_pid
from memsync.hosts.claude_code import oversized_indexes, partly_loaded
from memsync.memoryfile.clock import future_in_store
from memsync.secrets.files import NOT_UTF8
from memsync.store.facade import Store
from memsync.tracks.listing import list_tracks
from memsync.tracks.resolve import load_tracks


def collect_status(path: Path) -> dict[str, Any]:
    """Everything `memsync status` shows, for the config file ``path``, as plain JSON data.

    ``{"config": str, "host": str, "daemon": {"running": bool, "pid": int|None}, "stores": {name: {...}}}``
    where each store has path, branch, tracks (``track_listing.list_tracks``: path, store_path, files,
    exists, excludes), last_cycle, last_cycle_error, remotes (url, status, last_success, last_error,
    unpushed: the commits of the store that remote lacks as of the last fetch or push, read from the
    store now; None for a missing store; removed: what a member's removal notice told this device about
    an encrypted remote, else None), unpushed (the most of those, else what the last cycle
    counted), held_back_secrets (file, line, detector), emptied (folder, files, advice: a folder found
    empty while memsync knows its files, ``files.Emptied``), future_entries (file, store_path, id, created_at,
    host, advice: entries dated beyond ``clock.TOLERANCE_S`` in this clock's future), both_kept,
    set_aside (files a merge moved out of a directory's way), clashes (file, store_path, here:
    "file"/"directory", advice: a file meeting a directory, not synced until renamed), untracked,
    size_bytes, partly_loaded (file, lines, bytes: a synced ``MEMORY.md`` longer than Claude Code
    loads); and at the top level ``untracked_hosts`` (path, kind: ``detect.untracked_hosts``). Reads the
    status file the last cycle
    wrote (facts read from the store itself are refreshed). Raises ``MemsyncError`` for a bad config.
    """
    config = load_tracks(path)
    pid = running_daemon_pid(path)
    stores: dict[str, Any] = {}
    for name, store_cfg in config.stores.items():
        status = read_status(store_cfg)
        remotes = status.get("remotes") if isinstance(status.get("remotes"), dict) else {}
        assert isinstance(remotes, dict)
        exists = StoreLayout(store_cfg.path).exists
        store = Store(store_cfg, config.host, config.identity()) if exists else None
        unpushed = {r: None if store is None else store.unpushed_count(r) for r in store_cfg.remotes}
        stores[name] = {
            "path": str(store_cfg.path),
            "branch": store_cfg.branch,
            "last_cycle": status.get("last_cycle"),
            "last_cycle_error": status.get("last_cycle_error"),
            "remotes": {
                r: {
                    "url": redacted(url),
                    "status": remotes.get(r, {}).get("status"),
                    "last_success": remotes.get(r, {}).get("last_success"),
                    "last_error": remotes.get(r, {}).get("last_error"),
                    "unpushed": unpushed[r],
                    "removed": None if store is None else store.removed(r),
                }
                for r, url in store_cfg.remotes.items()
            },
            "unpushed": max(
                (count for count in unpushed.values() if count is not None), default=status.get("unpushed", 0)
            ),
            "clashes": status.get("clashes", []),
            "exists": exists,
            "tracks": list_tracks(store_cfg),
            "partly_loaded": [
                {"file": str(index), "lines": lines, "bytes": size}
                for index, lines, size in oversized_indexes(track.live for track in store_cfg.tracks)
            ],
        }
        facts = (
            store_facts(store_cfg)
            if stores[name]["exists"]
            else {"held_back_secrets": [], "both_kept": [], "set_aside": [], "untracked": [], "size_bytes": 0}
        )
        stores[name].update(facts)
        stores[name]["emptied"] = emptied_folders(store_cfg) if stores[name]["exists"] else []
        stores[name]["future_entries"] = [
            {
                "file": str(live_path(store_cfg.tracks, entry.file) or entry.file),
                "store_path": entry.file,
                "id": entry.entry_id,
                "created_at": entry.created_at,
                "host": entry.host,
                "advice": entry.advice(),
            }
            for entry in (future_in_store(store_cfg.path) if stores[name]["exists"] else [])
        ]
    return {
        "config": str(path),
        "host": config.host,
        "daemon": {"running": pid is not None, "pid": pid},
        "stores": stores,
        "untracked_hosts": [
            {"path": str(loc.live), "kind": loc.found.value} for loc in untracked_hosts(config)
        ],
    }


def render_status(status: dict[str, Any]) -> str:
    """The text `memsync status` prints for ``status`` (what :func:`collect_status` returns)."""
    daemon = status["daemon"]
    lines = [
        f"host: {status['host']} (this machine, as commits name it)",
        f"daemon: {'running (PID ' + str(daemon['pid']) + ')' if daemon['running'] else 'not running'}",
    ]
    if not status["stores"]:
        lines.append("no stores: run `memsync init`")
    lines.extend(
        f"not synced: {host['kind']} {host['path']} (an agent host installed after `memsync init`): "
        "run `memsync init` again to track it"
        for host in status["untracked_hosts"]
    )
    for name, store in status["stores"].items():
        if not store["exists"]:
            lines.append(
                f"store {name}: missing, no git repository at {store['path']}. Run `memsync init` "
                f"to create it, or fix stores.{name}.path in the config"
            )
            continue
        lines.append(f"store {name}: {store['path']} (branch {store['branch']}, {store['size_bytes']} bytes)")
        lines.append(f"  last cycle: {store.get('last_cycle') or 'never'}")
        for track in store["tracks"]:
            held = plural(track["files"], "file") if track["exists"] else "does not exist yet"
            lines.append(f"  tracking {track['path']} as {track['store_path']} ({held})")
            lines.extend(f"    left out: {path}" for path in track["excludes"])
        if not store["tracks"]:
            lines.append("  tracking nothing: `memsync track PATH` adds memory")
        for remote, info in store["remotes"].items():
            state = f"last exchange {info.get('last_success') or 'never'}"
            state += f"; commits waiting to be pushed: {info['unpushed']}"
            if info.get("last_error"):
                state += f"; last error: {info['last_error']}"
            lines.append(f"  remote {remote} ({info['url']}): {state}")
            if info.get("removed"):
                lines.append(f"  removed: {info['removed']}")
        for secret in store["held_back_secrets"]:
            where = f"{secret['file']}:{secret['line']}"
            if secret["detector"] == NOT_UTF8:
                lines.append(f"  held back (not UTF-8 text): {where} (re-save it as UTF-8)")
            else:
                lines.append(f"  held back (secret): {where} ({secret['detector']})")
        for folder in store["emptied"]:
            lines.append(f"  held: {folder['advice']}")
        for entry in store["future_entries"]:
            lines.append(f"  dated in the future: {entry['file']}: {entry['advice']}")
        for path in store["both_kept"]:
            lines.append(f"  both versions kept, resolve by editing: {path}")
        for path in store["set_aside"]:
            lines.append(f"  moved aside, a directory took its name: {path} (merge it by hand, delete it)")
        for clash in store["clashes"]:
            lines.append(f"  not synced, a file meets a directory: {clash['advice']}")
        for path in store["untracked"]:
            lines.append(f"  in the store, not tracked here: {path}")
        for index in store["partly_loaded"]:
            lines.append(f"  {partly_loaded(index['file'], index['lines'], index['bytes'])}")
    return "\n".join(lines)
