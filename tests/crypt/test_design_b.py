"""Design B of encrypted remotes, the measured prototype (``bench/crypt_design_b.py``, compared with the
plaintext store and design A by ``bench/crypt_designs.py``): two devices append to one memory file at
once and merge through git (clean/smudge filters, the driver that opens the three versions): nothing is
lost, both hold the same file, and the remote holds no plaintext, neither text nor names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers import REPO_ROOT, bare_remote

sys.path.insert(0, str(REPO_ROOT / "bench"))

import crypt_design_b as design_b

FILE = "memory/memory.jsonl"


def entry(text: str) -> str:
    return f'{{"id":"{text}","kind":"lesson","text":"the harbor site {text} blocks requests"}}'


@pytest.mark.parametrize("mode", ["file", pytest.param("line", marks=pytest.mark.slow)])
def test_a_merge_through_the_filters_loses_nothing_and_the_remote_holds_only_ciphertext(
    tmp_path: Path, mode: str
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    secret = os.urandom(32)
    alice = design_b.Peer.create(tmp_path / "alice", remote, secret, mode)
    alice.append(FILE, entry("first"))
    alice.exchange()
    bob = design_b.Peer.create(tmp_path / "bob", remote, secret, mode)
    alice.append(FILE, entry("from-alice"))
    bob.append(FILE, entry("from-bob"))
    alice.exchange()
    bob.exchange()  # rejected at first: fetches, merges through the sealed driver, pushes
    alice.exchange()
    text = alice.path(FILE).read_text()
    assert text == bob.path(FILE).read_text()
    assert sorted(text.splitlines()) == sorted(entry(t) for t in ("first", "from-alice", "from-bob"))
    assert bob.git("log", "--merges", "--format=%H").stdout  # a real three-way merge ran
    assert bob.git("status", "--porcelain").stdout == ""  # deterministic: the tree is clean after it
    held = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=remote, capture_output=True, check=True
    ).stdout
    # Words of five letters or more: the ciphertext is base64 text, where a three-letter word such as "bob"
    # turns up by chance in about one run in a few hundred (the 16-byte windows below cover the rest).
    for plain in (b"harbor", b"from-bob", b"memory", b"jsonl", b"alice"):
        assert plain not in held
    assert [w for w in (text[i : i + 16].encode() for i in range(len(text) - 15)) if w in held] == []
    authors = bob.git("log", "--format=%an %ae %cn %ce %ad %s", "origin/main").stdout.splitlines()
    assert set(authors) == {
        "memsync memsync@invalid memsync memsync@invalid Sat Jan 1 00:00:00 2000 +0000 sync"
    }


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from(design_b.MODES))
def test_sealing_round_trips_and_any_other_bytes_raise_seal_error(data: bytes, mode: str) -> None:
    keys = design_b.Keys.derive(b"k" * 32)
    blob = design_b.seal(keys, mode, "name", data)
    assert design_b.seal(keys, mode, "name", data) == blob  # deterministic
    assert design_b.unseal(keys, mode, "name", blob) == data
    if data:
        with pytest.raises(design_b.SealError):
            design_b.unseal(keys, mode, "name", data)
        with pytest.raises(design_b.SealError):
            design_b.unseal(keys, mode, "other", blob)  # bound to its file's name
