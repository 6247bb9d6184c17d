"""Add, replace or remove one server entry in a JSON or JSONC settings file as text, keeping every
other byte (comments, trailing commas, layout, number text) as it was (VS Code, Zed, OpenCode, Amp and
the other JSON hosts of ``registry``).

The entry sits at ``{KEY: {NAME: entry}}`` under the top-level object. A new entry goes first in its
object, on its own line with the file's indentation, followed by a comma when other members follow;
a new ``KEY`` object likewise goes first in the top-level object. Removing takes out exactly those
bytes again (and a ``KEY`` object it leaves empty, unless the host requires ``KEY``: Copilot CLI refuses
a file without ``mcpServers``), so connecting then disconnecting gives back the same file. Each edit is
checked by reading the result: it must mean the old file with only the entry changed, else it is
refused and nothing is written.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsync.errors import MemsyncError

_TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<punct>[{}\[\]:,])|(?P<lit>[^\s{}\[\]:,"/]+)',
    re.DOTALL,
)
_INDENT = re.compile(r"\n([ \t]+)\S")
_MAX_DEPTH = 200


@dataclass(frozen=True)
class _Token:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Member:
    """One ``"key": value`` of an object: the key, where the member starts and its value ends, where the
    comma after it ends (None: no comma), the value and, for an object value, its layout."""

    key: str
    start: int
    end: int
    comma_end: int | None
    value: Any
    obj: _Object | None


@dataclass(frozen=True)
class _Object:
    open: int
    close: int
    members: tuple[_Member, ...]


def _tokens(text: str, path: Path) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise _bad(path, f"unexpected {text[pos : pos + 10]!r}")
        kind = match.lastgroup
        if kind is not None:
            out.append(_Token(kind, match.start(), match.end()))
        pos = match.end()
    return out


def _bad(path: Path, why: str) -> MemsyncError:
    return MemsyncError(f"cannot read {path}: not valid JSON with comments ({why}). Fix the file, then retry")


class _Parser:
    def __init__(self, text: str, path: Path) -> None:
        self.text, self.path = text, path
        self.tokens = _tokens(text, path)
        self.at = 0

    def _next(self) -> _Token:
        if self.at >= len(self.tokens):
            raise _bad(self.path, "it ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def _peek(self) -> str:
        return self.text[self.tokens[self.at].start] if self.at < len(self.tokens) else ""

    def value(self, depth: int = 0) -> tuple[Any, _Object | None]:
        if depth > _MAX_DEPTH:
            raise _bad(self.path, "nested too deeply")
        token = self._next()
        word = self.text[token.start : token.end]
        if word == "{":
            return self._object(token, depth)
        if word == "[":
            items: list[Any] = []
            while self._peek() != "]":
                items.append(self.value(depth + 1)[0])
                if self._peek() != "]":
                    self._expect(",")
            self._next()
            return items, None
        if token.kind in ("str", "lit"):
            try:
                return json.loads(word), None
            except ValueError:
                raise _bad(self.path, f"{word[:20]!r} is no value") from None
        raise _bad(self.path, f"unexpected {word!r}")

    def _expect(self, word: str) -> _Token:
        token = self._next()
        if self.text[token.start : token.end] != word:
            raise _bad(self.path, f"{word!r} expected at byte {token.start}")
        return token

    def _object(self, opening: _Token, depth: int) -> tuple[Any, _Object]:
        members: list[_Member] = []
        while self._peek() != "}":
            key = self._next()
            if key.kind != "str":
                raise _bad(self.path, f"a key expected at byte {key.start}")
            self._expect(":")
            value, obj = self.value(depth + 1)
            end = self.tokens[self.at - 1].end
            comma = self._expect(",").end if self._peek() != "}" else None
            members.append(
                _Member(json.loads(self.text[key.start : key.end]), key.start, end, comma, value, obj)
            )
        closing = self._next()
        return {m.key: m.value for m in members}, _Object(opening.start, closing.start, tuple(members))


def _root(text: str, path: Path) -> tuple[dict[str, Any], _Object]:
    parser = _Parser(text, path)
    value, obj = parser.value()
    if parser.at != len(parser.tokens) or obj is None:
        raise _bad(path, "not one object")
    return value, obj


def parse(data: bytes, path: Path) -> dict[str, Any]:
    """The top-level object of the JSON or JSONC bytes ``data`` (read from ``path``, for messages).
    Raises MemsyncError for anything else."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(path, "not UTF-8") from None
    return _root(text, path)[0]


def _insert(text: str, obj: _Object, member: str, indent: str, depth: int) -> str:
    at = obj.open + 1
    if obj.members:
        return text[:at] + "\n" + indent * depth + member + "," + text[at:]
    return text[:at] + "\n" + indent * depth + member + "\n" + indent * (depth - 1) + text[obj.close :]


def _remove(text: str, obj: _Object, index: int) -> str:
    member = obj.members[index]
    if len(obj.members) == 1:
        return text[: obj.open + 1] + text[obj.close :]
    if index == 0:
        assert member.comma_end is not None  # a member is followed by another
        return text[: obj.open + 1] + text[member.comma_end :]
    return text[: obj.members[index - 1].end] + text[member.end :]


def _render(value: Any, indent: str, depth: int) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False).replace("\n", "\n" + indent * depth)


def with_entry(
    text: str, key: str, name: str, entry: dict[str, Any] | None, path: Path, keep: bool = False
) -> str:
    """``text`` with ``KEY.NAME`` set to ``entry`` or, for None, removed (see the module doc; ``keep``:
    an emptied ``KEY`` object stays); other bytes unchanged. Raises MemsyncError for a file that is not
    a JSON(C) object, or whose ``key`` is not an object."""
    if not text.strip():
        return "" if entry is None else _render({key: {name: entry}}, "  ", 0) + "\n"
    _, root = _root(text, path)
    found = _INDENT.search(text)
    indent = found.group(1) if found else "  "
    where = next((i for i, m in enumerate(root.members) if m.key == key), None)
    holder = None if where is None else root.members[where]
    if holder is not None and holder.obj is None:
        raise MemsyncError(f"cannot edit {path}: its {key} is not an object. Fix the file, then retry")
    servers = holder.obj if holder is not None else None
    ours = (
        None if servers is None else next((i for i, m in enumerate(servers.members) if m.key == name), None)
    )
    if entry is None:
        if servers is None or ours is None:
            return text
        if len(servers.members) == 1 and where is not None and not keep:
            return _remove(text, root, where)
        return _remove(text, servers, ours)
    member = json.dumps(name, ensure_ascii=False) + ": " + _render(entry, indent, 2)
    if servers is None:
        block = json.dumps(key, ensure_ascii=False) + ": {\n" + indent * 2 + member + "\n" + indent + "}"
        return _insert(text, root, block, indent, 1)
    if ours is None:
        return _insert(text, servers, member, indent, 2)
    current = servers.members[ours]
    if current.value == entry:
        return text
    start = current.start
    return text[:start] + member + text[current.end :]


def expected(
    before: dict[str, Any], key: str, name: str, entry: dict[str, Any] | None, keep: bool = False
) -> dict[str, Any]:
    """What a file holding ``before`` must hold after :func:`with_entry` (an emptied ``key`` goes
    unless ``keep``)."""
    after = copy.deepcopy(before)
    servers = after.setdefault(key, {})
    if entry is None:
        servers.pop(name, None)
        if not servers and not (keep and key in before):
            del after[key]
    else:
        servers[name] = entry
    return after


def update(
    path: Path, key: str, name: str, entry: dict[str, Any] | None, keep: bool = False
) -> Callable[[bytes | None, dict[str, Any] | None], bytes | None]:
    """The ``update`` of ``settings_file.edit_file`` that sets or removes the entry as text (``keep``:
    as in :func:`with_entry`) and checks the result (see the module doc). Raises MemsyncError when the
    edit would change anything else."""

    def run(old: bytes | None, before: dict[str, Any] | None) -> bytes | None:
        text = "" if old is None else old.decode("utf-8")
        new = with_entry(text, key, name, entry, path, keep)
        if new == text:
            return None
        if parse(new.encode("utf-8"), path) != expected(before or {}, key, name, entry, keep):
            raise MemsyncError(
                f"cannot edit {path} without changing more than memsync's entry. Add under {key!r}: "
                f"{json.dumps({name: entry})} by hand (or remove it), then retry"
            )
        return new.encode("utf-8")

    return run
