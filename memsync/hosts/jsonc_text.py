"""Add, replace or remove one server entry in a JSON or JSONC settings file as text, keeping every
other byte (comments, trailing commas, layout, number text, a byte order mark, CRLF line ends) as it
was (VS Code, Zed, OpenCode, Amp and the other JSON hosts of ``registry``); :func:`rewrite` does the
same for any change of the object, member by member (memsync's hooks in Gemini CLI's and Qwen Code's
``settings.json``).

The entry sits at ``{KEY: {NAME: entry}}`` under the top-level object. A new entry goes first in its
object, on its own line with the file's indentation, followed by a comma when other members follow; a new
``KEY`` object likewise goes first in the top-level object. Removing takes out exactly those bytes again
(and a ``KEY`` object it leaves empty, unless kept: the host requires ``KEY``, as Copilot CLI refuses a
file without ``mcpServers``, or the user's file held it before memsync's edit), so connecting then
disconnecting gives back the same file. Each edit is checked by reading the result: it must mean the old
file with only the entry changed, else it is refused and nothing is written."""

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
    r'[\s\ufeff]+|//[^\n]*|/\*.*?\*/|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<punct>[{}\[\]:,])|(?P<lit>[^\s{}\[\]:,"/]+)',
    re.DOTALL,
)
_INDENT = re.compile(r"\n([ \t]+)\S")
_MAX_DEPTH = 200
# More single edits than any change of memsync's needs: a file where they never settle is refused.
_MAX_EDITS = 1000


@dataclass(frozen=True)
class _Token:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Item:
    """One item of an array: where it starts and ends, where the comma after it ends (None: none), the
    value and, for an object or array, its layout."""

    start: int
    end: int
    comma_end: int | None
    value: Any
    obj: _Object | None
    array: _Array | None


@dataclass(frozen=True)
class _Member(_Item):
    """One ``"key": value`` of an object: an item (starting at its key) with its key and where its
    value starts."""

    key: str
    value_start: int


@dataclass(frozen=True)
class _Object:
    open: int
    close: int
    members: tuple[_Member, ...]


@dataclass(frozen=True)
class _Array:
    open: int
    close: int
    items: tuple[_Item, ...]


_Node = _Object | _Array | None


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

    def value(self, depth: int = 0) -> tuple[Any, _Node]:
        if depth > _MAX_DEPTH:
            raise _bad(self.path, "nested too deeply")
        token = self._next()
        word = self.text[token.start : token.end]
        if word == "{":
            return self._object(token, depth)
        if word == "[":
            items: list[_Item] = []
            while self._peek() != "]":
                start = self.tokens[self.at].start if self.at < len(self.tokens) else len(self.text)
                value, node = self.value(depth + 1)
                end = self.tokens[self.at - 1].end
                comma = self._expect(",").end if self._peek() != "]" else None
                items.append(_Item(start, end, comma, value, *_split(node)))
            closing = self._next()
            return [i.value for i in items], _Array(token.start, closing.start, tuple(items))
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
            value_start = self.tokens[self.at].start if self.at < len(self.tokens) else len(self.text)
            value, node = self.value(depth + 1)
            end = self.tokens[self.at - 1].end
            comma = self._expect(",").end if self._peek() != "}" else None
            name = json.loads(self.text[key.start : key.end])
            members.append(_Member(key.start, end, comma, value, *_split(node), name, value_start))
        closing = self._next()
        return {m.key: m.value for m in members}, _Object(opening.start, closing.start, tuple(members))


def _split(node: _Node) -> tuple[_Object | None, _Array | None]:
    return (node, None) if isinstance(node, _Object) else (None, node)


def _root(text: str, path: Path) -> tuple[dict[str, Any], _Object]:
    parser = _Parser(text, path)
    value, obj = parser.value()
    if parser.at != len(parser.tokens) or not isinstance(obj, _Object):
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


def _insert(text: str, obj: _Object, member: str, indent: str, depth: int, newline: str) -> str:
    at = obj.open + 1
    if obj.members:
        return text[:at] + newline + indent * depth + member + "," + text[at:]
    return text[:at] + newline + indent * depth + member + newline + indent * (depth - 1) + text[obj.close :]


def _append(text: str, array: _Array, item: str, indent: str, depth: int, newline: str) -> str:
    if array.items:
        end = array.items[-1].end
        return text[:end] + "," + newline + indent * depth + item + text[end:]
    at = array.open + 1
    return text[:at] + newline + indent * depth + item + newline + indent * (depth - 1) + text[array.close :]


def _remove(text: str, node: _Object | _Array, index: int) -> str:
    parts: tuple[_Item, ...] = node.members if isinstance(node, _Object) else node.items
    part = parts[index]
    if len(parts) == 1:
        return text[: node.open + 1] + text[node.close :]
    if index == 0:
        assert part.comma_end is not None  # a member is followed by another
        return text[: node.open + 1] + text[part.comma_end :]
    return text[: parts[index - 1].end] + text[part.end :]


def _render(value: Any, indent: str, depth: int, newline: str = "\n") -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False).replace("\n", newline + indent * depth)


def _layout(text: str) -> tuple[str, str]:
    """The indentation unit and line break of ``text`` (two spaces and LF when it shows none)."""
    found = _INDENT.search(text)
    return (found.group(1) if found else "  "), ("\r\n" if "\r\n" in text else "\n")


def with_entry(
    text: str, key: str, name: str, entry: dict[str, Any] | None, path: Path, keep: bool = False
) -> str:
    """``text`` with ``KEY.NAME`` set to ``entry`` or, for None, removed (see the module doc; ``keep``:
    an emptied ``KEY`` object stays); other bytes unchanged. Raises MemsyncError for a file that is not
    a JSON(C) object, or whose ``key`` is not an object."""
    if not text.strip():
        return "" if entry is None else _render({key: {name: entry}}, "  ", 0) + "\n"
    _, root = _root(text, path)
    indent, newline = _layout(text)
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
    member = json.dumps(name, ensure_ascii=False) + ": " + _render(entry, indent, 2, newline)
    if servers is None:
        block = (
            json.dumps(key, ensure_ascii=False)
            + ": {"
            + newline
            + indent * 2
            + member
            + newline
            + indent
            + "}"
        )
        return _insert(text, root, block, indent, 1, newline)
    if ours is None:
        return _insert(text, servers, member, indent, 2, newline)
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


def rewrite(
    path: Path, mutate: Callable[[dict[str, Any]], None]
) -> Callable[[bytes | None, dict[str, Any] | None], bytes | None]:
    """The ``update`` of ``settings_file.edit_file`` that applies ``mutate`` to the object of the JSON(C)
    file ``path`` as text: each member, array item or value that changes is inserted (a member first in
    its object, an item last in its array), removed or rewritten alone, so every other byte stays
    (comments, trailing commas, a byte order mark, CRLF line breaks). Raises MemsyncError when the
    edit does not converge (a key given twice)."""

    def run(old: bytes | None, before: dict[str, Any] | None) -> bytes | None:
        after = copy.deepcopy(before or {})
        mutate(after)
        if after == (before or {}):
            return None
        text = "" if old is None else old.decode("utf-8")
        if not text.strip():
            return (_render(after, "  ", 0) + "\n").encode("utf-8")
        indent, newline = _layout(text)
        for _ in range(_MAX_EDITS):
            value, root = _root(text, path)
            if value == after:
                return text.encode("utf-8")
            text = _step(text, root, value, after, 1, (indent, newline))
        raise MemsyncError(
            f"cannot edit {path}: memsync's change does not settle (is a key given twice?). "
            "Fix the file, then retry"
        )

    return run


def _step(
    text: str, node: _Object | _Array, before: Any, after: Any, depth: int, style: tuple[str, str]
) -> str:
    """``text`` with one edit that brings ``node`` (holding ``before``, at ``depth``) closer to ``after``."""
    indent, newline = style
    if isinstance(node, _Object):
        for index, member in enumerate(node.members):
            if member.key not in after:
                return _remove(text, node, index)
        missing = [key for key in after if key not in before]
        if missing:  # inserted first, the last one first: they end up in ``after``'s order
            key = missing[-1]
            member_text = (
                json.dumps(key, ensure_ascii=False) + ": " + _render(after[key], indent, depth, newline)
            )
            return _insert(text, node, member_text, indent, depth, newline)
        changed = next(m for m in node.members if m.value != after[m.key])
        return _change(text, changed, after[changed.key], depth, style)
    kept = len(before)
    if len(after) > kept and after[:kept] == before:
        return _append(text, node, _render(after[kept], indent, depth, newline), indent, depth, newline)
    first = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(kept, len(after))
    )
    if len(after) < kept:
        return _remove(text, node, first)
    if len(after) == kept:
        return _change(text, node.items[first], after[first], depth, style)
    return text[: node.open] + _render(after, indent, depth - 1, newline) + text[node.close + 1 :]


def _change(text: str, part: _Item, new: Any, depth: int, style: tuple[str, str]) -> str:
    """``text`` with the value of ``part`` (a member or item at ``depth``) one edit closer to ``new``:
    inside it when both are objects or both arrays, else rewritten whole."""
    if isinstance(new, dict) and part.obj is not None:
        return _step(text, part.obj, part.value, new, depth + 1, style)
    if isinstance(new, list) and part.array is not None:
        return _step(text, part.array, part.value, new, depth + 1, style)
    start = part.value_start if isinstance(part, _Member) else part.start
    return text[:start] + _render(new, style[0], depth, style[1]) + text[part.end :]
