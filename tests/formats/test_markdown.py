"""The markdown memory skill's role directory: reading, the write operations, check (seeds/002)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.formats.markdown.fields import parse_frontmatter
from memsync.formats.markdown.reading import read_daily_log, read_entry
from memsync.formats.markdown.roledir import RoleDir, check_role_dir
from memsync.formats.markdown.skill import slugify

NOW = datetime(2026, 11, 30, 9, 5, tzinfo=UTC)


def role(tmp_path: Path, name: str = "python-dev") -> RoleDir:
    path = tmp_path / ".agents" / "memory" / name
    path.mkdir(parents=True)
    return RoleDir(path)


def head(yaml_text: str) -> str:
    return f"---\n{yaml_text}---\n"


# --- slugify -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("User Timezone", "user_timezone"),
        ("Hook context cap & doc delivery", "hook_context_cap_doc_delivery"),
        ("  --Already_snake--  ", "already_snake"),
        ("Project briefing", "project_briefing"),
        ("Café notes → v2", "cafe_notes_v2"),
        ("a-green-control", "a_green_control"),
    ],
)
def test_slugify_follows_the_skill_rule(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_slugify_refuses_a_name_without_ascii_letters() -> None:
    with pytest.raises(MemsyncError, match="no ASCII letter or digit"):
        slugify("تسمية")


@given(st.text(max_size=40))
def test_slugify_is_a_safe_fixed_point(name: str) -> None:
    try:
        slug = slugify(name)
    except MemsyncError:
        return
    assert slug.strip("_") == slug
    assert all(c.isascii() and (c.isalnum() or c == "_") and not c.isupper() for c in slug)
    assert "__" not in slug
    assert slugify(slug) == slug


# --- frontmatter ---------------------------------------------------------------------------------------


def test_frontmatter_plain_fields() -> None:
    front = parse_frontmatter(head("name: User Timezone\ndescription: CET, works late\ntype: user\n"))
    assert (front.name, front.description, front.type, front.type_source) == (
        "User Timezone",
        "CET, works late",
        "user",
        "type",
    )
    assert front.problems == ()


def test_frontmatter_description_with_hash_is_text_not_a_comment() -> None:
    front = parse_frontmatter(head("name: x\ndescription: use issue #598 form C #dotted\ntype: project\n"))
    assert front.description == "use issue #598 form C #dotted"


def test_frontmatter_quoted_description_with_escapes() -> None:
    yaml_text = 'name: a\ndescription: "says \\"zero\\" # not a comment"\ntype: feedback\n'
    front = parse_frontmatter(head(yaml_text))
    assert front.description == 'says "zero" # not a comment'


def test_frontmatter_dates_and_numbers_stay_text() -> None:
    front = parse_frontmatter(head("name: 2026-08-10\ndescription: 42\ntype: project\n"))
    assert (front.name, front.description) == ("2026-08-10", "42")


def test_frontmatter_multiline_plain_description_is_folded_by_yaml() -> None:
    front = parse_frontmatter(head("name: a\ndescription: first part\n  second part\ntype: project\n"))
    assert front.description == "first part second part"


def test_frontmatter_type_nested_under_metadata_with_trailing_space() -> None:
    text = head(
        'name: p16b\ndescription: "cut off \\u2014 PR"\nmetadata: \n  node_type: memory\n'
        "  type: project\n  originSessionId: 2031363d-7960-40fd-b178-0a9f137f06d0\n  modified: 2026-08-10\n"
    )
    front = parse_frontmatter(text)
    assert (front.type, front.type_source) == ("project", "metadata.type")
    assert front.description == "cut off — PR"
    assert front.fields["metadata"]["originSessionId"] == "2031363d-7960-40fd-b178-0a9f137f06d0"
    assert front.problems == ()


def test_frontmatter_node_type_alone_is_understood_when_it_is_a_skill_type() -> None:
    front = parse_frontmatter(head("name: b\ndescription: d\nmetadata:\n  node_type: feedback\n"))
    assert (front.type, front.type_source) == ("feedback", "metadata.node_type")
    front = parse_frontmatter(head("name: b\ndescription: d\nmetadata:\n  node_type: memory\n"))
    assert front.type is None


def test_frontmatter_unknown_keys_and_types_are_kept() -> None:
    front = parse_frontmatter(head("name: g\ndescription: d\ntype: preventive\ntags: [a, b]\ncreated: x\n"))
    assert front.type == "preventive"
    assert front.fields["tags"] == ["a", "b"]
    assert front.fields["created"] == "x"


def test_invalid_yaml_is_reported_with_its_line_and_read_line_by_line() -> None:
    front = parse_frontmatter(head("name: n\ndescription: a: b\ntype: user\nmetadata:\n  type: x\n"))
    assert (front.name, front.description, front.type) == ("n", "a: b", "user")
    assert len(front.problems) == 1
    line, message = front.problems[0]
    assert line == 3
    assert "not valid YAML" in message


def test_invalid_yaml_still_finds_a_nested_type() -> None:
    front = parse_frontmatter(head('name: n\ndescription: a: b\nmetadata:\n  type: "feedback"\n'))
    assert (front.type, front.type_source) == ("feedback", "metadata.type")


def test_impossible_date_and_non_mapping_frontmatter_do_not_crash() -> None:
    front = parse_frontmatter(head("name: n\ndescription: d\ntype: user\nmodified: 2026-02-30\n"))
    assert front.type == "user"
    assert front.problems and "not valid YAML" in front.problems[0][1]
    front = parse_frontmatter(head("- just\n- a list\n"))
    assert front.name is None
    assert "not a YAML mapping" in front.problems[0][1]


# --- reading entries and daily logs --------------------------------------------------------------------


def test_read_entry_keeps_bytes_and_reports_problems(tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_bytes(b"---\nname: G\ndescription: d\ntype: user\n---\n\nline one\rstill line one\n")
    entry = read_entry(good)
    assert (entry.slug, entry.name, entry.type, entry.problems) == ("good", "G", "user", ())
    assert entry.head + entry.body == good.read_bytes().decode()
    assert "\r" in entry.body

    odd = tmp_path / "odd.md"
    odd.write_bytes(b"---\nname: O\ntype: preventive\n---\n\nbody\n\xff\n")
    messages = [(p.line, p.message) for p in read_entry(odd).problems]
    assert (7, "not UTF-8 text: re-save it as UTF-8") in messages
    assert any("no description" in m for _, m in messages)
    assert any("'preventive' is not one of" in m for _, m in messages)

    unclosed = tmp_path / "unclosed.md"
    unclosed.write_text("---\nname: U\n\nbody\n")
    assert [p.message for p in read_entry(unclosed).problems] == [
        "frontmatter is not closed: add a line '---' after its last key"
    ]


def test_read_daily_log_understands_timed_and_free_form_lines(tmp_path: Path) -> None:
    path = tmp_path / "2026-08-09.md"
    path.write_text(
        "# 2026-08-09 — scout\n\n- [21:45] Ran the audit\n  over two lines.\n\n## Notes\n\n| a | b |\n"
        "- [22:10] second\n- plain bullet\n"
    )
    daily = read_daily_log(path)
    assert daily.title == "2026-08-09 — scout"
    assert daily.date == "2026-08-09"
    assert [(i.line, i.time, i.text) for i in daily.items] == [
        (3, "21:45", "Ran the audit"),
        (9, "22:10", "second"),
    ]
    assert daily.problems == ()


def test_read_daily_log_reports_an_unfinished_last_line(tmp_path: Path) -> None:
    path = tmp_path / "2026-08-10.md"
    path.write_text("# Daily log — 2026-08-10\n\n- [09:20] half writ")
    assert [(p.line, p.message) for p in read_daily_log(path).problems] == [
        (3, "last line has no line end: finish it with a newline")
    ]


def test_index_items_with_continuations_headings_and_blockquotes(tmp_path: Path) -> None:
    memory = role(tmp_path)
    memory.index_path.write_text(
        "# Memory index — python-dev\n\n> preamble with [a link](nothing.md)\n\n## ★★★ Heading\n\n"
        "- [Tz \\[CET\\]](user_timezone.md) — works late,\n  answers in the morning\n"
        "- ⚠ no link here [[wikilink]]\n"
    )
    items = memory.index_items()
    assert [(i.line, i.key, i.name, i.target) for i in items] == [
        (7, "user_timezone.md", "Tz [CET]", "user_timezone.md"),
        (9, "⚠ no link here [[wikilink]]", None, None),
    ]
    assert items[0].description == "works late, answers in the morning"


# --- operations ----------------------------------------------------------------------------------------


def test_log_creates_todays_log_with_its_title_then_appends(tmp_path: Path) -> None:
    memory = role(tmp_path)
    path = memory.log("User wants to reuse the config key", now=NOW)
    assert path == memory.path / "daily" / "2026-11-30.md"
    memory.log("second observation", now=NOW.replace(hour=14, minute=7))
    assert path.read_text() == (
        "# Daily log — 2026-11-30\n\n- [09:05] User wants to reuse the config key\n"
        "- [14:07] second observation\n"
    )
    assert [p.name for p in path.parent.iterdir()] == ["2026-11-30.md"]


def test_log_ends_an_unfinished_last_line_first(tmp_path: Path) -> None:
    memory = role(tmp_path)
    (memory.path / "daily").mkdir()
    path = memory.path / "daily" / "2026-11-30.md"
    path.write_text("# 2026-11-30 — free form\n\nnotes without newline")
    memory.log("new", now=NOW)
    assert path.read_text() == "# 2026-11-30 — free form\n\nnotes without newline\n- [09:05] new\n"


def test_log_refuses_empty_or_multiline_text(tmp_path: Path) -> None:
    memory = role(tmp_path)
    with pytest.raises(MemsyncError, match="several lines"):
        memory.log("one\ntwo", now=NOW)
    with pytest.raises(MemsyncError, match="empty"):
        memory.log("  ", now=NOW)
    assert not (memory.path / "daily").exists()


def test_two_processes_logging_at_once_lose_no_line_and_write_one_title(tmp_path: Path) -> None:
    memory = role(tmp_path)
    script = (
        "import sys; from datetime import datetime, UTC; from pathlib import Path\n"
        "from memsync.formats.markdown.roledir import RoleDir\n"
        "r = RoleDir(Path(sys.argv[1])); now = datetime(2026, 11, 30, 9, 5, tzinfo=UTC)\n"
        "for i in range(200): r.log(f'{sys.argv[2]} {i}', now=now)\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(memory.path), who], cwd=Path(__file__).parents[2])
        for who in ("alice", "bob")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    lines = (memory.path / "daily" / "2026-11-30.md").read_text().split("\n")
    assert lines[:2] == ["# Daily log — 2026-11-30", ""]
    assert lines[-1] == ""
    body = lines[2:-1]
    assert sorted(body) == sorted(f"- [09:05] {who} {i}" for who in ("alice", "bob") for i in range(200))


def test_write_entry_creates_the_entry_and_the_index(tmp_path: Path) -> None:
    memory = role(tmp_path)
    path = memory.write_entry("User Timezone", "user", "CET; answers mornings", "The user is in Berlin.\n")
    assert path == memory.path / "user_timezone.md"
    assert path.read_text() == (
        "---\nname: User Timezone\ndescription: CET; answers mornings\ntype: user\n---\n\n"
        "The user is in Berlin.\n"
    )
    assert memory.index_path.read_text() == (
        "# Memory index — python-dev\n\n- [User Timezone](user_timezone.md) — CET; answers mornings\n"
    )
    assert check_role_dir(memory.path) == []


def test_write_entry_replaces_its_index_line_and_leaves_the_rest_alone(tmp_path: Path) -> None:
    memory = role(tmp_path)
    memory.index_path.write_text(
        "# Memory index\n\n> keep me\n\n- [Other](other.md) — stays\n"
        "- [User Timezone](user_timezone.md) — old,\n  over two lines\n- [Last](last.md) — stays too"
    )
    memory.write_entry("User Timezone", "user", "new description", "body")
    memory.write_entry("User Timezone", "user", "newer description", "body")
    assert memory.index_path.read_text() == (
        "# Memory index\n\n> keep me\n\n- [Other](other.md) — stays\n"
        "- [User Timezone](user_timezone.md) — newer description\n- [Last](last.md) — stays too"
    )
    memory.write_entry("Fresh", "project", "appended", "body")
    assert memory.index_path.read_text().endswith(
        "- [Last](last.md) — stays too\n- [Fresh](fresh.md) — appended\n"
    )


def test_write_entry_collapses_duplicate_index_lines_for_one_slug_not_links_to_its_parts(
    tmp_path: Path,
) -> None:
    memory = role(tmp_path)
    memory.index_path.write_text(
        "# I\n\n- [A](a.md) — one\n- [B](b.md) — b\n- [A: x](./a.md#x) — part x\n- [A](./a.md) — two\n"
    )
    memory.write_entry("A", "reference", "only", "see the dashboard")
    assert memory.index_path.read_text() == (
        "# I\n\n- [A](a.md) — only\n- [B](b.md) — b\n- [A: x](./a.md#x) — part x\n"
    )


def test_write_and_rename_keep_every_line_linking_a_part_of_the_entry(tmp_path: Path) -> None:
    memory = role(tmp_path)
    memory.write_entry("Deploy", "project", "how we deploy", "## staging\n\n## rollback\n")
    parts = (
        "- [Deploy: staging](deploy.md#staging) — staging\n- [Deploy: rollback](deploy.md#rollback) — back\n"
    )
    memory.index_path.write_text(memory.index_path.read_text() + parts)
    memory.write_entry("Deploy", "project", "how we deploy, edited", "## staging\n\n## rollback\n")
    title = "# Memory index — python-dev\n\n"
    assert memory.index_path.read_text() == title + "- [Deploy](deploy.md) — how we deploy, edited\n" + parts
    memory.rename("deploy", "Release")
    assert memory.index_path.read_text() == title + (
        "- [Release](release.md) — how we deploy, edited\n"
        "- [Deploy: staging](release.md#staging) — staging\n"
        "- [Deploy: rollback](release.md#rollback) — back\n"
    )


def test_write_entry_values_yaml_would_misread_round_trip(tmp_path: Path) -> None:
    memory = role(tmp_path)
    description = 'a: b, "quoted" # not a comment'
    path = memory.write_entry("[Odd] name: yes", "feedback", description, "why: because")
    entry = read_entry(path)
    assert (entry.name, entry.description, entry.type, entry.problems) == (
        "[Odd] name: yes",
        description,
        "feedback",
        (),
    )
    assert path.name == "odd_name_yes.md"
    assert list(entry.fields) == ["name", "description", "type"]
    assert memory.index_items()[0].name == "[Odd] name: yes"
    assert check_role_dir(memory.path) == []


_ONE_LINE = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), min_size=1, max_size=40
).filter(lambda text: text.strip() == text and text != "")


@settings(max_examples=80, deadline=None)
@given(name=st.tuples(st.sampled_from("aZ9"), _ONE_LINE).map("".join), description=_ONE_LINE)
def test_any_one_line_name_and_description_round_trip(name: str, description: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        memory = RoleDir(Path(tmp))
        path = memory.write_entry(name, "project", description, "body")
        entry = read_entry(path)
        assert (entry.name, entry.description, entry.type) == (name, description, "project")
        assert entry.problems == ()
        assert path.read_text(encoding="utf-8").count("\n") == 7


def test_write_entry_refuses_bad_input(tmp_path: Path) -> None:
    memory = role(tmp_path)
    with pytest.raises(MemsyncError, match="'preventive' is not one of"):
        memory.write_entry("x", "preventive", "d", "c")
    with pytest.raises(MemsyncError, match="several lines"):
        memory.write_entry("x", "user", "one\ntwo", "c")
    assert list(memory.path.iterdir()) == []


def test_rename_moves_the_file_keeps_everything_else_and_relinks_in_place(tmp_path: Path) -> None:
    memory = role(tmp_path)
    old = memory.path / "a-green-control.md"
    old.write_text(
        '---\nname: a-green-control\ndescription: "keep \\"me\\""\nmetadata: \n  type: feedback\n'
        "  originSessionId: 42\n---\n\nBody with [[links]].\n"
    )
    memory.index_path.write_text(
        "# I\n\n- ★ [Green](a-green-control.md) — short,\n  continued\n- [B](b.md) — b\n"
    )
    new = memory.rename("a-green-control", "Green controls can be blind")
    assert new == memory.path / "green_controls_can_be_blind.md"
    assert not old.exists()
    assert new.read_text() == (
        '---\nname: Green controls can be blind\ndescription: "keep \\"me\\""\n'
        "metadata: \n  type: feedback\n"
        "  originSessionId: 42\n---\n\nBody with [[links]].\n"
    )
    assert memory.index_path.read_text() == (
        "# I\n\n- ★ [Green controls can be blind](green_controls_can_be_blind.md) — short,\n  continued\n"
        "- [B](b.md) — b\n"
    )


def test_rename_without_index_line_adds_one_and_refuses_to_overwrite(tmp_path: Path) -> None:
    memory = role(tmp_path)
    memory.write_entry("Taken", "user", "t", "t")
    memory.write_entry("Old", "project", "old thing", "o")
    with pytest.raises(MemsyncError, match=r"taken\.md already exists"):
        memory.rename("old", "Taken")
    memory.index_path.write_text("# I\n")
    memory.rename("Old", "Renamed")
    assert memory.index_path.read_text() == "# I\n- [Renamed](renamed.md) — old thing\n"
    assert read_entry(memory.path / "renamed.md").name == "Renamed"


def test_delete_removes_file_and_index_line(tmp_path: Path) -> None:
    memory = role(tmp_path)
    memory.write_entry("Keep", "user", "k", "k")
    memory.write_entry("Drop", "user", "d", "d")
    memory.delete("drop")
    assert not (memory.path / "drop.md").exists()
    assert memory.index_path.read_text() == "# Memory index — python-dev\n\n- [Keep](keep.md) — k\n"
    with pytest.raises(MemsyncError, match="no curated entry 'drop'"):
        memory.delete("drop")
    with pytest.raises(MemsyncError, match="no curated entry"):
        memory.delete("MEMORY")


def test_role_dir_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(MemsyncError, match="not a directory"):
        RoleDir(tmp_path / "missing")


# --- check ---------------------------------------------------------------------------------------------


def test_check_reports_each_problem_with_its_line(tmp_path: Path) -> None:
    memory = role(tmp_path)
    memory.write_entry("Good", "user", "g", "g")
    (memory.path / "weird.md").write_text("---\nname: W\ndescription: d\ntype: preventive\n---\nx\n")
    (memory.path / "notes.md").write_text("operational notes, no frontmatter: fine\n")
    (memory.path / "bare.md").write_text("indexed but bare\n")
    (memory.path / ".last-retrospective").write_text("{}")
    memory.index_path.write_text(
        "# I\n\n- [Good](good.md) — g\n- [Gone](gone.md) — missing\n- [Good twice](good.md) — dup\n"
        "- [Bare](bare.md) — b\n- [Weird](weird.md) — w\n- [Good: part](good.md#part) — a part, fine\n"
    )
    daily = memory.path / "daily"
    daily.mkdir()
    (daily / "yesterday.md").write_text("x\n")
    (daily / "2026-11-29.md").write_text("# Daily log — 2026-11-29\n\n- [10:00] unfinished")
    found = [
        (p.path.relative_to(memory.path).as_posix(), p.line, p.message) for p in check_role_dir(memory.path)
    ]
    assert found == [
        ("MEMORY.md", 4, "links to gone.md, which does not exist: fix the link or drop the item"),
        ("MEMORY.md", 5, "second item for good.md (first on line 3): keep one line per entry"),
        ("bare.md", 1, "indexed but has no frontmatter: add name, description, type"),
        ("daily/2026-11-29.md", 3, "last line has no line end: finish it with a newline"),
        ("daily/yesterday.md", 0, "not a daily log name: rename it to YYYY-MM-DD.md"),
        ("weird.md", 1, "type 'preventive' is not one of user, feedback, project, reference"),
    ]


def test_check_wants_an_index_when_entries_exist(tmp_path: Path) -> None:
    memory = role(tmp_path)
    assert check_role_dir(memory.path) == []
    (memory.path / "a.md").write_text("---\nname: A\ndescription: d\ntype: user\n---\n")
    problems = check_role_dir(memory.path)
    assert [(p.path, p.line) for p in problems] == [(memory.path, 0)]
    assert "no MEMORY.md" in str(problems[0])


def test_claude_code_folder_is_a_role_directory(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(
        "# Memory Index\n\n- [Simple English](user-prefers-simple-english.md) — x\n"
    )
    (folder / "user-prefers-simple-english.md").write_text(
        '---\nname: user-prefers-simple-english\ndescription: "Short words"\n'
        "metadata: \n  type: user\n---\n\nB\n"
    )
    (folder / "unindexed-plan.md").write_text(
        "---\nname: unindexed-plan\ndescription: a plan\n"
        "metadata:\n  node_type: memory\n  type: project\n---\n\nP\n"
    )
    memory = RoleDir(folder)
    assert [(e.slug, e.type) for e in memory.entries()] == [
        ("unindexed-plan", "project"),
        ("user-prefers-simple-english", "user"),
    ]
    assert memory.daily_logs() == []
    assert check_role_dir(folder) == []
    memory.write_entry("Plan B", "project", "new", "b")
    assert "- [Plan B](plan_b.md) — new\n" in memory.index_path.read_text()
    memory.write_entry("user-prefers-simple-english", "user", "plain words", "Body")
    assert not (folder / "user_prefers_simple_english.md").exists()
    assert read_entry(folder / "user-prefers-simple-english.md").description == "plain words"
    assert "- [user-prefers-simple-english](user-prefers-simple-english.md) — plain words\n" in (
        memory.index_path.read_text()
    )
    assert memory.index_path.read_text().count("user-prefers-simple-english.md") == 1


# Backticks and tildes are left out: an unclosed code fence at the end would swallow the appended line.
_INDEX_LINE = st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="`~"), max_size=30)


@settings(max_examples=50, deadline=None)
@given(st.lists(_INDEX_LINE, max_size=8))
def test_any_index_text_survives_a_write_and_a_delete_byte_for_byte(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        memory = RoleDir(Path(tmp))
        original = "\n".join(lines)
        memory.index_path.write_bytes(original.encode())
        memory.index_items()
        check_role_dir(memory.path)
        memory.write_entry("Zed entry", "user", "z", "z")
        assert memory.index_path.read_bytes().decode().count("(zed_entry.md)") == 1
        memory.delete("zed_entry")
        ended = original if not original or original.endswith("\n") else original + "\n"
        assert memory.index_path.read_bytes().decode() == ended
