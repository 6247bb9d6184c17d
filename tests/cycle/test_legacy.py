"""A project's roles moved from ``projects/<name>/<role>`` to ``projects/<identity>/<role>``: machines that
upgrade in any order, or not yet, converge and lose nothing (real git, real `memsync sync` processes).

An "old" machine is one whose config maps the role to the store path earlier versions computed (an
explicit ``as``, which is what those versions synced); an upgraded one leaves the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomli_w

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from tests.support.helpers import git
from tests.support.peers import Peer, sync

NEW = "projects/github.com~org~shop/qa"


def project_peer(tmp_path: Path, remote: Path, name: str, checkout: str, url: str) -> Peer:
    """A peer whose tracked role is ``qa`` in a real git checkout at ``~/<checkout>`` with origin
    ``url``; ``peer.role_dir`` points at it, so the Peer helpers write there."""
    peer = Peer.create(tmp_path, name, remote)
    project = peer.home / checkout
    project.mkdir(parents=True)
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", url)
    peer.role_dir = project / ".agents" / "memory" / "qa"
    peer.role_dir.mkdir(parents=True)
    return peer


def use(peer: Peer, store_path: str | None) -> None:
    """Map the role to ``store_path`` (an old machine) or to the default (``None``: upgraded)."""
    track: dict[str, Any] = {"path": str(peer.role_dir)}
    if store_path is not None:
        track["as"] = store_path
    raw = {
        "host": peer.name,
        "author": {"name": peer.name, "email": f"{peer.name}@example.invalid"},
        "stores": {
            "main": {"path": str(peer.store), "remotes": {"origin": str(peer.remote)}, "track": [track]}
        },
    }
    peer.config.write_text(tomli_w.dumps(raw))


def daily(peer: Peer) -> bytes:
    return peer.read_live("daily/2026-11-30.md")


def no_clash(*peers: Peer) -> None:
    for peer in peers:
        for path in peer.role_dir.rglob("*.md"):
            assert BOTH_KEPT_NOTE_PREFIX.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_machines_with_different_old_keys_converge_after_upgrading(tmp_path: Path, remote: Path) -> None:
    # Old keys differ ('shop' vs 'Shop' from the origin URLs); the identity is one.
    a = project_peer(tmp_path, remote, "alice", "src/shop", "git@github.com:org/shop.git")
    b = project_peer(tmp_path, remote, "bob", "code/Shop", "https://github.com/org/Shop.git")
    use(a, "projects/shop/qa")
    use(b, "projects/Shop/qa")
    a_lines = [a.append_daily(f"- [09:0{i}] alice line {i}\n") for i in range(3)]
    b_lines = [b.append_daily(f"- [10:0{i}] bob line {i}\n") for i in range(3)]
    a.write_curated("cart", "The cart rounds totals to cents.\n")
    b.write_curated("deploy", "Deploys go out on Tuesdays.\n")
    sync(a, b, a)

    use(a, None)
    use(b, None)
    a_lines.append(a.append_daily("- [11:00] alice after upgrading\n"))
    sync(a)
    b_lines.append(b.append_daily("- [11:30] bob before his first new sync\n"))
    sync(b, a, b)

    for peer in (a, b):
        log = daily(peer)
        assert all(line in log for line in a_lines + b_lines), (peer.name, log)
        assert peer.read_live("cart.md").endswith(b"cents.\n")
        assert peer.read_live("deploy.md").endswith(b"Tuesdays.\n")
        assert (peer.store / NEW / "daily" / "2026-11-30.md").read_bytes().count(b"\n") >= len(
            a_lines + b_lines
        )
    assert sorted(daily(a).splitlines()) == sorted(daily(b).splitlines())
    no_clash(a, b)
    # The legacy paths are kept, not deleted: a machine not upgraded yet still syncs there.
    assert (a.store / "projects/shop/qa/cart.md").is_file() and (
        a.store / "projects/Shop/qa/deploy.md"
    ).is_file()
    # Bob's legacy path is not alice's: hers is folded, his is store content she does not map.
    status = a.cli("status").stdout
    assert "not tracked here: projects/Shop/" in status and "projects/shop/" not in status


@pytest.mark.slow
def test_an_upgraded_machine_and_an_old_one_lose_nothing(tmp_path: Path, remote: Path) -> None:
    # The same old key on both: the upgraded machine folds what the old one keeps writing there.
    a = project_peer(tmp_path, remote, "alice", "src/shop", "git@github.com:org/shop.git")
    b = project_peer(tmp_path, remote, "bob", "code/shop", "ssh://git@github.com/org/shop")
    use(a, "projects/shop/qa")
    use(b, "projects/shop/qa")
    first = a.append_daily("- [09:00] before anyone upgraded\n")
    a.write_curated("cart", "The cart rounds totals.\n")
    (a.role_dir / "MEMORY.md").write_text("- [Cart](cart.md) — rounding\n")
    sync(a, b)

    use(a, None)  # alice upgrades; bob does not
    a_new = a.append_daily("- [10:00] alice, upgraded\n")
    sync(a)
    b_new = [b.append_daily("- [10:30] bob, still old\n")]
    b.write_curated("cart", "The cart rounds totals to cents.\n")  # an edit of a folded entry
    with (b.role_dir / "MEMORY.md").open("a") as index:
        index.write("- [Deploy](deploy.md) — Tuesdays\n")
    b.write_curated("deploy", "Deploys go out on Tuesdays.\n")
    sync(b, a)
    b_new.append(b.append_daily("- [10:45] bob again\n"))
    sync(b, a, b)

    # Nothing bob wrote left his files; alice's current path has all of it.
    assert all(line in daily(b) for line in [first, *b_new])
    for line in [first, a_new, *b_new]:
        assert line in daily(a)
    assert a.read_live("cart.md").endswith(b"to cents.\n") and a.read_live("deploy.md")
    assert b"deploy.md" in a.read_live("MEMORY.md") and b"cart.md" in a.read_live("MEMORY.md")

    a.write_curated("cart", "The cart rounds totals to cents, half up.\n")  # edited on the new path
    sync(a)
    use(b, None)  # bob upgrades at last: his old copy of cart.md is older, not a rival edit
    sync(b, a, b)
    assert a.read_live("cart.md").endswith(b"half up.\n")
    assert sorted(daily(a).splitlines()) == sorted(daily(b).splitlines())
    assert a_new in daily(b)
    for name in ("cart.md", "deploy.md", "MEMORY.md"):
        assert a.read_live(name) == b.read_live(name), name
    no_clash(a, b)
