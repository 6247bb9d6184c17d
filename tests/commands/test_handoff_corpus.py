"""Real input: every role directory and memory file of ../shared/corpus handed to an empty agent of the other
format and back; every text survives the round trip, and handing again adds nothing (issue 6 "Tests")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memsync.commands.handoff.handoff import handoff
from memsync.commands.handoff.mapping import TEXT_CHARS, derived_id
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.markdown.roledir import RoleDir
from memsync.secrets import scan_text
from tests.support.handoff_fixtures import NOW, tree
from tests.support.helpers import CORPUS_CREDENTIAL

ROLE_DIRS = ("skill/scout", "skill/acmp-claude")
MEMORY_FILES = ("jsonl/acmp.jsonl", "jsonl/qa-engineer.jsonl")


def one_line(text: str) -> str:
    return " ".join(text.split())


def copy(corpus: Path, relative: str, tmp_path: Path) -> Path:
    """A writable copy of a corpus agent (the corpus itself is read-only)."""
    source = corpus / relative
    target = tmp_path / "given" / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
    return target


def descriptions(role: Path) -> list[str]:
    return [one_line(e.description or e.name or e.slug) for e in RoleDir(role).entries()]


@pytest.mark.parametrize("relative", ROLE_DIRS)
def test_role_directory_to_memory_file_and_back_keeps_every_text(
    corpus: Path, tmp_path: Path, relative: str
) -> None:
    given = copy(corpus, relative, tmp_path)
    role = RoleDir(given)
    as_file = tmp_path / "as-file.jsonl"
    there = handoff(str(given), str(as_file), now=NOW)
    # The corpus holds one credential (tests.support.helpers.CORPUS_CREDENTIAL); what the scanner flags is
    # reported, never written.
    flagged = {s.item for s in there.skipped}
    for skip in there.skipped:
        assert skip.reason == "possible secret" and scan_text((given / skip.item).read_text())
    received = {e.id: e.text for e in read_memory(as_file).view(NOW)}
    texts = set(received.values())
    for curated in role.entries():
        if curated.path.name in flagged:
            continue
        # The description first, then every body line: the knowledge, not only its title.
        text = received[derived_id(given.name, curated.slug)]
        assert text.split("\n")[0] == one_line(curated.description or curated.name or curated.slug)
        body = [line.rstrip() for line in curated.body.splitlines() if line.strip()]
        shown = [line for line in text.split("\n")[1:] if line]
        assert len(text) <= TEXT_CHARS
        if shown and shown[-1] == f"(cut: the rest is in {curated.path.name})":
            shown = shown[:-1]  # a long entry: whole lines from its start
            assert 0 < len(shown) < len(body)
        assert shown == body[: len(shown)] and (len(shown) == len(body) or len(text) > TEXT_CHARS // 2)
    logs = [note.text for daily in role.daily_logs()[-3:] for note in daily.items]
    assert set(logs) <= texts
    assert len(texts) == len(there.handed)

    back = tmp_path / "back"
    handoff(str(as_file), str(back), now=NOW)
    assert set(descriptions(back)) == {one_line(text) for text in texts}
    bodies = "\n".join(e.body for e in RoleDir(back).entries())
    assert all(text in bodies for text in texts if "\n" in text)
    assert RoleDir(back).check() == []

    original = tree(given)
    home = handoff(str(as_file), str(given), now=NOW)  # back into the role it came from: nothing new
    assert not home.handed and tree(given) == original

    first = (as_file.read_bytes(), tree(back))
    assert not handoff(str(given), str(as_file), now=NOW).handed
    assert not handoff(str(as_file), str(back), now=NOW).handed
    assert (as_file.read_bytes(), tree(back)) == first


@pytest.mark.parametrize("relative", MEMORY_FILES)
def test_memory_file_to_role_directory_and_back_keeps_every_text(
    corpus: Path, tmp_path: Path, relative: str
) -> None:
    given = copy(corpus, relative, tmp_path)
    live = read_memory(given).view(NOW)
    as_role = tmp_path / "as-role"
    there = handoff(str(given), str(as_role), now=NOW)
    assert not there.skipped and len(there.handed) == len(live)
    received = {e.description: e for e in RoleDir(as_role).entries()}
    for entry in live:
        curated = received[one_line(entry.text)]
        assert f"entry {entry.id} (kind {entry.kind}, scope {entry.scope}" in curated.body
        if one_line(entry.text) != entry.text.strip():
            assert entry.text.strip() in curated.body
    assert RoleDir(as_role).check() == []

    back = tmp_path / "back.jsonl"
    handoff(str(as_role), str(back), now=NOW)
    # Each entry comes back as itself (the Source line carries its id, kind, scope, source, confidence).
    returned = {e.id: e for e in read_memory(back).view(NOW)}
    assert set(returned) == {e.id for e in live}
    for entry in live:
        again = returned[entry.id]
        assert (again.text, again.kind, again.scope, again.source, again.confidence, again.created_at) == (
            one_line(entry.text),
            entry.kind,
            entry.scope,
            entry.source,
            entry.confidence,
            entry.created_at,
        )
    before = given.read_bytes()
    assert not handoff(str(as_role), str(given), now=NOW).handed
    assert given.read_bytes() == before

    first = tree(as_role)
    assert not handoff(str(given), str(as_role), now=NOW).handed
    assert tree(as_role) == first


def test_role_to_role_copies_real_entries_byte_for_byte(corpus: Path, tmp_path: Path) -> None:
    given = copy(corpus, "skill/acmp-claude", tmp_path)
    receiver = copy(corpus, "skill/scout", tmp_path)
    report = handoff(str(given), str(receiver), now=NOW)
    credential = Path(CORPUS_CREDENTIAL[0]).name
    assert [(skip.item, skip.reason) for skip in report.skipped] == [(credential, "possible secret")]
    assert len(report.handed) == len(RoleDir(given).entries()) - 1
    assert not (receiver / credential).exists()
    odd = "scan-must-prove-it-had-a-subject.md"  # holds a bare CR, kept as is
    original = (given / odd).read_bytes()
    assert b"\r" in original
    source_line = f"\n\nSource: handoff from acmp-claude ({odd})\n".encode()
    assert (receiver / odd).read_bytes() == original.rstrip(b"\n") + source_line
    assert (receiver / "project_briefing.md").read_bytes() == (
        given.parent / "scout" / "project_briefing.md"
    ).read_bytes()
