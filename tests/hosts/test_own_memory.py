"""The hosts' own memory (Claude Code's subagent memory, Gemini CLI's and Qwen Code's memory files,
OpenCode's global rules, Goose's memory folders) is tracked by `memsync init` where it exists, listed by
`status`, and a line written on one machine arrives byte-identical on the other (two HOMEs sharing a
bare remote, the real CLI, real git)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main, git

# Claude Code 2.1.x writes memory files with nested frontmatter.
SUBAGENT_NOTE = (
    "---\n"
    "name: review style\n"
    "description: what this reviewer learned of the house style\n"
    "metadata:\n"
    "  type: feedback\n"
    "  node_type: memory\n"
    "  originSessionId: 5f0c2a9e-1b7d-4c1e-9a51-0d2e7f1c9b3a\n"
    "  modified: 2026-12-03T09:12:44.120Z\n"
    "---\n"
    "\n"
    "Prefer early returns over nested conditionals.\n"
)
GEMINI = "# My notes\n\n## Gemini Added Memories\n- My preferred language is Python.\n"
QWEN = "## Qwen Added Memories\n- The build runs with `just build`.\n"
OPENCODE = "# Rules\n\n- Run `just check` before every commit.\n"
GOOSE = "# build tools\nThe monorepo builds with just.\n"


@dataclass(frozen=True)
class Machine:
    """One machine: its HOME and the environment its CLI runs with."""

    home: Path
    env: dict[str, str]

    def cli(self, *args: str) -> str:
        done = cli_main(*args, env=self.env)
        assert done.returncode == 0, f"{self.home.name}: memsync {' '.join(args)}: {done.stderr}"
        return done.stdout


def machine(tmp_path: Path, name: str) -> Machine:
    home = tmp_path / name
    home.mkdir()
    return Machine(home, isolated_env(home))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())


def host_places(home: Path) -> dict[str, Path]:
    return {
        "subagent": home / ".claude" / "agent-memory" / "code-reviewer",
        "gemini": home / ".gemini" / "GEMINI.md",
        "qwen": home / ".qwen" / "QWEN.md",
        "goose": home / ".config" / "goose" / "memory",
        "opencode": home / ".config" / "opencode" / "AGENTS.md",
    }


@pytest.mark.slow  # two machines' init and syncs through the CLI: about 12 s
def test_init_tracks_each_hosts_own_memory_and_a_line_arrives_byte_identical(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    mine = host_places(a.home)
    write(mine["subagent"] / "MEMORY.md", "- [Review style](review_style.md) — house style\n")
    write(mine["subagent"] / "review_style.md", SUBAGENT_NOTE)
    write(mine["gemini"], GEMINI)
    write(mine["qwen"], QWEN)
    write(mine["goose"] / "build.txt", GOOSE)
    write(mine["opencode"], OPENCODE)
    write(a.home / ".gemini" / "oauth_creds.json", '{"refresh_token": "never synced"}\n')
    for place in host_places(b.home).values():  # the hosts are installed there, with no memory yet
        place.parent.mkdir(parents=True)

    said = a.cli("init", "--remote", str(remote))
    assert f"tracking {a.home / '.claude' / 'agent-memory'} as claude/agent-memory" in said
    assert f"tracking {mine['gemini']} as gemini/GEMINI.md" in said
    assert f"tracking {mine['qwen']} as qwen/QWEN.md" in said
    assert f"tracking {mine['goose']} as goose/memory" in said
    assert f"tracking {mine['opencode']} as opencode/AGENTS.md" in said
    a.cli("sync")
    b.cli("init", "--remote", str(remote))
    b.cli("sync")

    theirs = host_places(b.home)
    assert (theirs["subagent"] / "review_style.md").read_bytes() == SUBAGENT_NOTE.encode()
    assert theirs["gemini"].read_bytes() == GEMINI.encode()
    assert theirs["qwen"].read_bytes() == QWEN.encode()
    assert theirs["opencode"].read_bytes() == OPENCODE.encode()
    assert (theirs["goose"] / "build.txt").read_bytes() == GOOSE.encode()
    tree = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    assert not any("oauth" in path or "settings" in path for path in tree)

    # Both machines edit the one subagent memory file (its frontmatter and its body) and add lines.
    edited_a = SUBAGENT_NOTE.replace("2026-12-03T09:12:44.120Z", "2026-12-03T10:00:00.000Z")
    write(mine["subagent"] / "review_style.md", edited_a)
    write(mine["goose"] / "build.txt", GOOSE + "\n# test\nTests run with `just test`.\n")
    a.cli("sync")
    write(theirs["subagent"] / "review_style.md", SUBAGENT_NOTE + "Name booleans as questions.\n")
    write(theirs["gemini"], GEMINI + "- Deploys go out on Tuesdays.\n")
    b.cli("sync")
    a.cli("sync")
    for host in ("gemini", "qwen"):
        assert mine[host].read_bytes() == theirs[host].read_bytes()
    assert mine["gemini"].read_text().endswith("- Deploys go out on Tuesdays.\n")
    assert (theirs["goose"] / "build.txt").read_text().endswith("Tests run with `just test`.\n")
    merged = (mine["subagent"] / "review_style.md").read_bytes()
    assert merged == (theirs["subagent"] / "review_style.md").read_bytes()
    assert merged == (edited_a + "Name booleans as questions.\n").encode()

    listed = json.loads(b.cli("status", "--json"))
    assert listed["untracked_hosts"] == []


def checkout(root: Path) -> Path:
    """A checkout of one project (its origin on GitHub) at ``root``."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "remote", "add", "origin", "git@github.com:Acme/Shop.git")
    return root


@pytest.mark.slow  # two machines' init and syncs through the CLI: about 12 s
def test_a_projects_own_host_memory_under_two_checkout_paths_meets_at_one_store_path(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    projects = checkout(a.home / "src" / "shop"), checkout(b.home / "work" / "acme-shop")
    ours, theirs = (project / ".claude" / "agent-memory" for project in projects)
    goose_ours, goose_theirs = (project / ".goose" / "memory" for project in projects)
    write(ours / "code-reviewer" / "review_style.md", SUBAGENT_NOTE)
    write(goose_ours / "build.txt", GOOSE)
    theirs.mkdir(parents=True)
    goose_theirs.mkdir(parents=True)
    for m, folder, goose in ((a, ours, goose_ours), (b, theirs, goose_theirs)):
        m.cli("init", "--remote", str(remote))
        said = m.cli("track", str(folder))
        assert "as claude/project-agent-memory/github.com~acme~shop" in said, said
        assert "as goose/projects/github.com~acme~shop" in m.cli("track", str(goose))
        m.cli("sync")
    assert (theirs / "code-reviewer" / "review_style.md").read_bytes() == SUBAGENT_NOTE.encode()
    assert (goose_theirs / "build.txt").read_bytes() == GOOSE.encode()
    write(theirs / "code-reviewer" / "MEMORY.md", "- [Review style](review_style.md)\n")
    b.cli("sync")
    a.cli("sync")
    assert (ours / "code-reviewer" / "MEMORY.md").read_text() == "- [Review style](review_style.md)\n"
    tree = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    assert sorted(p for p in tree if p.startswith(("claude/project-agent-memory/", "goose/"))) == [
        "claude/project-agent-memory/github.com~acme~shop/code-reviewer/MEMORY.md",
        "claude/project-agent-memory/github.com~acme~shop/code-reviewer/review_style.md",
        "goose/projects/github.com~acme~shop/build.txt",
    ]


@pytest.mark.slow  # two machines' init and syncs through the CLI: about 12 s
def test_two_machines_saving_gemini_memories_at_once_keep_both_lines(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    write(a.home / ".gemini" / "GEMINI.md", GEMINI)
    (b.home / ".gemini").mkdir()
    a.cli("init", "--remote", str(remote))
    a.cli("sync")
    b.cli("init", "--remote", str(remote))
    b.cli("sync")
    # save_memory on both machines before either syncs: each adds its bullet at the section's end.
    write(a.home / ".gemini" / "GEMINI.md", GEMINI + "- Deploys go out on Tuesdays.\n")
    write(b.home / ".gemini" / "GEMINI.md", GEMINI + "- Use pnpm, not npm.\n")
    a.cli("sync")
    b.cli("sync")
    a.cli("sync")
    ours, theirs = (m.home / ".gemini" / "GEMINI.md" for m in (a, b))
    assert ours.read_bytes() == theirs.read_bytes()
    lines = ours.read_text().splitlines()
    assert lines[: len(GEMINI.splitlines())] == GEMINI.splitlines()
    assert sorted(lines[len(GEMINI.splitlines()) :]) == [
        "- Deploys go out on Tuesdays.",
        "- Use pnpm, not npm.",
    ]
    assert "[memsync]" not in ours.read_text() and "<<<<<<<" not in ours.read_text()


def gemini_project_folder(home: Path, slug: str, project: Path) -> Path:
    """Gemini CLI 0.61's folder for ``project`` under ``home``: ``~/.gemini/tmp/<slug>`` with the project's
    path in ``.project_root`` (its ownership marker), the memory folder inside."""
    write(home / ".gemini" / "tmp" / slug / ".project_root", str(project))
    memory = home / ".gemini" / "tmp" / slug / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    return memory


@pytest.mark.slow  # two machines' init and syncs through the CLI: about 12 s
def test_gemini_project_memory_under_two_slugs_and_checkout_paths_meets_at_one_store_path(
    tmp_path: Path,
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    shop_a, shop_b = checkout(a.home / "src" / "shop"), checkout(b.home / "work" / "acme-shop")
    # Gemini CLI names a project's folder by a slug of its own (`shop-1`: another `shop` came first).
    ours = gemini_project_folder(a.home, "shop-1", shop_a)
    theirs = gemini_project_folder(b.home, "acme-shop", shop_b)
    elsewhere = b.home / "src" / "blog"
    elsewhere.mkdir(parents=True)
    git(elsewhere, "init", "-q")
    other = gemini_project_folder(b.home, "shop-1", elsewhere)  # the same slug on b: another project
    again = gemini_project_folder(b.home, "shop", checkout(b.home / "src" / "shop"))  # a second checkout
    note = "# Project memory\n\n- The shop's tests run with `just test`.\n"
    write(ours / "MEMORY.md", note)

    said = a.cli("init", "--remote", str(remote))
    assert f"tracking {ours} as gemini/projects/github.com~acme~shop" in said, said
    a.cli("sync")
    said = b.cli("init", "--remote", str(remote))
    assert f"{again}" in said and "the same project as" in said, said
    b.cli("sync")
    assert (theirs / "MEMORY.md").read_bytes() == note.encode()
    assert not (other / "MEMORY.md").exists()
    write(theirs / "MEMORY.md", note + "- Deploys go out on Tuesdays.\n")
    b.cli("sync")
    a.cli("sync")
    assert (ours / "MEMORY.md").read_text().endswith("- Deploys go out on Tuesdays.\n")
    tree = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    assert [p for p in tree if p.startswith("gemini/projects/")] == [
        "gemini/projects/github.com~acme~shop/MEMORY.md"
    ]
