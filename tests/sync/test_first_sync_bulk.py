"""A first sync of thousands of files in bulk (DESIGN I6, "One sync cycle" steps 2-5): the secret scan of a
pass's files runs in groups (``secrets.files.scan_wholes``), each file judged as if scanned alone; the
commit stages them with one ``git update-index`` fed on stdin. Through the real path: two peers, a bare
remote, ``memsync sync`` subprocesses; what held back and what arrived compared by content."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.secrets.files import NOT_UTF8, scan_name, scan_whole, scan_wholes
from memsync.sync.writes import BATCH_FILES
from tests.secrets.test_disguised import CURATED, NAMES
from tests.support.helpers import bare_remote, remote_blobs
from tests.support.peers import Peer

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
PEM_BEGIN = "-----BEGIN RSA PRIVATE KEY-----"
PEM_LINE = "MIIEowIBAAKCAQEAx4Jd8mQpZ2vR7nL0sT5uW9yB3cF6hK1oN4qS8tV2xA5zC7eG"


def test_bulk_scan_judges_each_file_as_alone(corpus: Path) -> None:
    """Files scanned together: the verdict of each is that of a scan of it alone, for the corpus, the
    disguised kinds of curated files, and neighbours that would make a secret only if joined (a key
    block's BEGIN ending one file and its body opening the next; a token cut in two)."""
    files = [path.read_bytes() for path in sorted(corpus.rglob("*.md")) if path.is_file()]
    files += [data for _, data, _ in CURATED.values()]
    files += [
        f"notes\n{PEM_BEGIN}".encode(),
        f"{PEM_LINE}\n{PEM_LINE}\n".encode(),
        b"the token is ghp_aBcDeFgHiJkLm",
        b"NoPqRsTuVwXyZ0123456789 and more\n",
        f"key {GITHUB}\n".encode(),
        "b\xe9".encode("latin-1"),
    ]
    alone = [scan_whole(data) for data in files]
    assert scan_wholes(files) == alone
    assert alone[-6:] == [(2, "Private Key"), None, None, None, (1, "GitHub Token"), (1, NOT_UTF8)]
    assert sum(verdict is not None for verdict in alone) >= len(CURATED) + 3


def test_names_are_judged_per_name_whatever_was_scanned_before() -> None:
    """``scan_name`` caches each name once: the same name in another path flags it alike, a clean path
    sharing directories with a flagged one stays clean."""
    for rel, _ in NAMES.values():
        assert scan_name(f"roles/qa/{rel}") is not None, rel
        assert scan_name(f"roles/other/deeper/{rel}") == scan_name(f"roles/qa/{rel}")
    assert scan_name("roles/qa/notes/clean.md") is None
    assert scan_name(f"roles/qa/{GITHUB}/n1.md") == scan_name(f"roles/x/{GITHUB}.md")


@pytest.mark.slow
def test_first_sync_of_thousands_of_files_holds_back_the_secrets_and_delivers_the_rest(
    tmp_path: Path,
) -> None:
    """A's first sync of 3 groups' worth of new files, secrets in a few of them (in a body, in a name, a
    key block, in different write groups): none of them reaches the remote; every other file arrives on
    B with the same bytes; A's status lists each held file."""
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    notes = alice.role_dir / "notes"
    notes.mkdir()
    count = BATCH_FILES * 3 + 17
    secret = {
        7: f"deploy with {GITHUB}\n".encode(),
        BATCH_FILES + 1: f"{PEM_BEGIN}\n{PEM_LINE}\n-----END RSA PRIVATE KEY-----\n".encode(),
        count - 1: b'the staging db password = "Tr0ub4dor&3x"\n',
    }
    expected = {}
    for i in range(count):
        data = secret.get(i, b"note %d: the build uses make\n" % i)
        (notes / f"n{i:05d}.md").write_bytes(data)
        if i not in secret:
            expected[f"n{i:05d}.md"] = data
    named = notes / "db_password=Hunter2x99.md"
    named.write_bytes(b"a clean body\n")

    for peer in (alice, bob):
        result = peer.cli("sync", timeout=600)
        assert result.returncode == 0, result.stderr

    arrived = {path.name: path.read_bytes() for path in (bob.role_dir / "notes").iterdir()}
    assert arrived == expected
    blobs = b"\0".join(remote_blobs(remote))
    for needle in (GITHUB, "BEGIN RSA PRIVATE KEY", PEM_LINE, "Tr0ub4dor&3x", "Hunter2x99"):
        assert needle.encode() not in blobs, needle
    held = {Path(item["file"]).name for item in alice.status()["stores"]["main"]["held_back_secrets"]}
    assert held == {f"n{i:05d}.md" for i in secret} | {named.name}
