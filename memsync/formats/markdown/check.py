"""``memsync check`` of a role directory: every place it does not follow the skill (seeds/002), ordered by
path and line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memsync.base.layout import is_ignored
from memsync.formats.markdown.index import links_part
from memsync.formats.markdown.reading import Problem, read_text
from memsync.formats.markdown.skill import DAILY_DIR, DAILY_NAME, INDEX_NAME, MAX_READ_BYTES

if TYPE_CHECKING:
    from memsync.formats.markdown.roledir import RoleDir


def check(role: RoleDir) -> list[Problem]:
    """Every problem in the role directory ``role``, ordered by path and line (``[]`` when it follows the
    skill).

    Index: undecodable bytes, items linking to a missing entry, two items for one entry (items linking
    parts of it, ``deploy.md#staging``, are not), no index while entries exist. Entries: see
    :func:`read_entry`; an indexed file without frontmatter. Daily logs: file names that are not
    ``YYYY-MM-DD.md``, see :func:`read_daily_log`. Unindexed entries, index descriptions that differ from
    the entry's, free-form logs and non-markdown files are fine.
    """
    problems: list[Problem] = []
    items = role.index_items()
    if role.index_path.is_file():
        problems += read_text(role.index_path, MAX_READ_BYTES)[1]
    seen: dict[str, int] = {}
    for item in items:
        local = role.local_target(item)
        if local is None:
            continue
        if local in seen and not links_part(item.text):
            problems.append(
                Problem(
                    role.index_path,
                    item.line,
                    f"second item for {local} (first on line {seen[local]}): keep one line per entry",
                )
            )
            continue
        seen[local] = item.line
        if not (role.path / local).is_file():
            problems.append(
                Problem(
                    role.index_path,
                    item.line,
                    f"links to {local}, which does not exist: fix the link or drop the item",
                )
            )
    entries = role.entries()
    if entries and not role.index_path.is_file():
        problems.append(
            Problem(
                role.path,
                0,
                f"no {INDEX_NAME}, though {len(entries)} curated entries exist: add an index line per entry",
            )
        )
    for entry in entries:
        problems += entry.problems
        if not entry.head:
            message = "indexed but has no frontmatter: add name, description, type"
            problems.append(Problem(entry.path, 1, message))
    folder = role.path / DAILY_DIR
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file() and not is_ignored(path.name) and not DAILY_NAME.match(path.name):
                problems.append(Problem(path, 0, "not a daily log name: rename it to YYYY-MM-DD.md"))
    for daily in role.daily_logs():
        problems += daily.problems
    return sorted(problems, key=lambda p: (str(p.path), p.line))
