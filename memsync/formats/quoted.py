"""Peer content as an agent reads it: quoted data, never the host's own markup (DESIGN "People in the
loop": peer content is data).

What peers wrote reaches an agent through the session-start hook, ``recall`` and ``prompt``, inside the
host's own blocks (Claude Code wraps a hook's context in ``<system-reminder>``). ``neutralise`` makes
one field of it (a text, a host name, a path) safe to print there: one line, no control or invisible
format characters, nothing that can open or close the host's blocks or pose as a turn of the
conversation, at most a given number of characters. The memory files keep every byte as written; only
what is printed for an agent goes through here.
"""

from __future__ import annotations

import functools
import html
import html.entities
import json
import re
import unicodedata
from collections.abc import Callable, Iterator

# A host name is a DNS label or a few: longer is no machine's name, only a way to crowd out the rest.
MAX_HOST_CHARS = 64
# A path (a store path, a live path under a deep home) or an id: far longer is no name, only noise.
MAX_PATH_CHARS = 300
# A line of a file or of a listing shown to an agent (`prompt` of a role, MCP `history`): past this it
# is cut; the file keeps it whole.
LINE_CHARS = 4000
# After the host of a commit that names this machine's host but that this machine did not make.
CLAIMED = "(claims to be this machine; not written here)"
# Markup that pretends to be the host's own is shown between these, so the agent reads it as quoted.
OPEN, CLOSE = "\u2039", "\u203a"  # single angle quotation marks

# Characters read as no text, kept out: controls (C0 but the line spaces, DEL, C1), format characters
# (soft hyphen, bidi marks and overrides, zero widths, the invisible tag characters U+E0000..),
# surrogates and private use: Unicode's Cc, Cf, Cs and Co (a test checks every code point).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ud800-\uf8ff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000f0000-\U000ffffd\U00100000-\U0010fffd]"
)
_ASCII_INVISIBLE = re.compile("[\x00-\x08\x0e-\x1f\x7f]")
# Markup is looked for in a folded form of the text (``_folded``): lookalikes of `<`, `>`, `:` and of
# Latin letters read as those, HTML entities as what they stand for. Then `<tag>`, `</tag>`, `<!-- -->`,
# `<?x ?>`, ChatML's `<|im_start|>`, a lone `</` or `<tag`, a `<` spaced from `/`, `!`, `?` or `|` (no
# prose puts those there), or a tag spaced out (`< /tag >`): whatever could open or close a block. A `<`
# spaced from a letter and never closed stays (`a < b` is a comparison).
_TAG = re.compile(r"<\s*(?=[/!?|])[^<>]*>?|<(?=[A-Za-z])[^<>]*>?|<\s*[A-Za-z][\w.:|-]*\s*[/|]?\s*>")
# A turn of a transcript (`Human:`, `Assistant:`, `System:`...) and a host's label for hook output
# (`SessionStart hook additional context:`, `SessionStart:startup hook success:`).
_SPEAKER = re.compile(
    r"\b((?i:human|assistant|system|user|developer)"
    r"|[A-Z][A-Za-z]*(?::[a-z]+)? hook\b[^:" + OPEN + CLOSE + r"]{0,60})\s*:"
)
_SPEAKER_WORDS = ("human", "assistant", "system", "user", "developer", " hook")
# Cyrillic and Greek letters that look like Latin ones (Unicode's confusables, the common part).
_LOOKALIKES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеіјорсхуѕԁһӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ",
    "ABESIJKMHOPCTXYaeijopcxysdhlABEZHIKMNOPTYXaiknoptux",
)
# Angle brackets that NFKC keeps apart from `<` and `>`.
_ANGLES = str.maketrans("〈〉⟨⟩", "<><>")
_FOLDED_CHARS = re.compile("[" + "".join(map(chr, {**_LOOKALIKES, **_ANGLES})) + "]")
# A character reference as HTML reads it: numeric, or a name HTML knows, the longest one there, since one
# known without its `;` ends where the name ends (`&ltb` reads as `<b`, as a browser and
# ``html.unescape`` read it). Every name is letters and digits, most with a `;` (``_entities`` looks
# those up): only the hundred known without it make a regex (all 2,200 took a tenth of a second to
# compile, at every start of a process that quotes).
_REFERENCE = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|([A-Za-z][A-Za-z0-9]*;?))")
_BARE_NAME = re.compile(
    "|".join(
        map(re.escape, sorted((n for n in html.entities.html5 if not n.endswith(";")), key=len, reverse=True))
    )
)


def _entities(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the character references in ``text`` as HTML reads them, in order."""
    for found in _REFERENCE.finditer(text):
        name = found.group(1)
        if name is None or (name.endswith(";") and name in html.entities.html5):
            yield found.span()
        elif (bare := _BARE_NAME.match(text, found.start() + 1)) is not None:
            yield found.start(), bare.end()


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` as markup is looked for in it, and for each folded character the index in ``text`` of
    the character (or entity) it comes from."""
    if "&" not in text and unicodedata.is_normalized("NFKC", text) and not _FOLDED_CHARS.search(text):
        return text, list(range(len(text)))  # most text: nothing to fold
    folded: list[str] = []
    origin: list[int] = []
    at = 0
    for start, end in [*_entities(text), (len(text), len(text))]:
        for index in range(at, start):
            char = unicodedata.normalize("NFKC", text[index]).translate(_ANGLES).translate(_LOOKALIKES)
            folded.append(char)
            origin.extend([index] * len(char))
        if start < end:
            char = html.unescape(text[start:end])
            folded.append(char)
            origin.extend([start] * len(char))
            at = end
    return "".join(folded), origin


def _quote_brackets(tag: str) -> str:
    """``tag`` with each character or entity that reads as an angle bracket replaced by ``OPEN`` or
    ``CLOSE``."""
    out: list[str] = []
    at = 0
    for start, end in [*_entities(tag), (len(tag), len(tag))]:
        out.extend(_quote_bracket(char) for char in tag[at:start])
        if start < end:
            out.append(_quote_bracket(tag[start:end]))
            at = end
    return "".join(out)


def _quote_bracket(unit: str) -> str:
    """A character or entity of a tag: ``OPEN`` or ``CLOSE`` for one that reads as an angle bracket."""
    fold = _folded(unit)[0]
    return OPEN if fold == "<" else CLOSE if fold == ">" else unit


def _marked(text: str) -> str:
    """``text`` (one line) with each tag between ``OPEN`` and ``CLOSE`` (its angle brackets, in any
    spelling, replaced by them) and each speaker label between them."""
    text = _rewritten(text, _TAG, _quote_brackets)
    return _rewritten(text, _SPEAKER, lambda span: f"{OPEN}{span}{CLOSE}")


def _rewritten(text: str, pattern: re.Pattern[str], rewrite: Callable[[str], str]) -> str:
    """``text`` with each span whose folded form matches ``pattern`` (its group 1 if it has one)
    replaced by ``rewrite(span)``."""
    folded, origin = (text, list(range(len(text)))) if text.isascii() and "&" not in text else _folded(text)
    if pattern is _SPEAKER:
        lowered = folded.lower()
        if ":" not in folded or not any(word in lowered for word in _SPEAKER_WORDS):  # the regex is slow
            return text
    ends = [*origin, len(text)]
    out: list[str] = []
    done = 0
    for found in pattern.finditer(folded):
        group = 1 if pattern.groups else 0
        first, last = origin[found.start(group)], ends[found.end(group)]
        if first < done:
            continue
        out.append(text[done:first] + rewrite(text[first:last]))
        done = last
    out.append(text[done:])
    return "".join(out)


# How much of a field is read before cutting: its visible start is what is shown.
_WINDOW_PER_CHAR = 8


def visible(text: str) -> str:
    """``text`` without its invisible and control characters (those ``neutralise`` removes); line breaks,
    tabs and markup stay. For a text a person edits, where ``neutralise``'s one quoted line would lose
    what they wrote. Never raises."""
    invisible = _ASCII_INVISIBLE if text.isascii() else _INVISIBLE  # most memory is ASCII: 10x faster
    return invisible.sub("", text)


def json_text(value: object) -> str:
    """``value`` as one line of JSON for a terminal or a script: other scripts' text kept readable
    (``ensure_ascii=False``), but each invisible, control and bidirectional character (what ``visible``
    removes) written as a ``\\uXXXX`` escape, so the line shows what it holds (a right-to-left override
    reorders nothing) and a JSON reader gets the same data back. Raises TypeError for what is not JSON."""
    return _INVISIBLE.sub(_escaped, json.dumps(value, ensure_ascii=False))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON escapes a character beyond the BMP as its UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def neutralise(text: str, limit: int) -> str:
    """``text`` (peer content) as one line fit to print in an agent's context: invisible and control
    characters removed, whitespace runs made one space, the host's markup (tags, speaker and hook
    labels) put between ``OPEN`` and ``CLOSE`` with its angle brackets replaced, cut to at most
    ``limit`` characters (ending in "…" when cut). Never raises; the result never holds ``<`` followed
    by a tag's start, a control character or a line break."""
    window = text[: limit * _WINDOW_PER_CHAR + 64]
    flat = " ".join(visible(window).split())
    flat = _marked(flat)
    if len(flat) <= limit and len(window) == len(text):
        return flat
    return flat[: max(limit - 1, 0)].rstrip() + "…"


def neutralise_lines(text: str, limit: int = LINE_CHARS) -> str:
    """``text`` of several lines (a file's, a listing's) with each line ``neutralise``d to at most
    ``limit`` characters after its indentation, which is kept (markdown and listings nest by it); the
    line ends stay. A line that reads as a markdown heading (``#``, in any spelling) is escaped
    (``\\#``), so a peer's text cannot forge the sections of the markdown it is quoted in. Never
    raises."""
    shown = []
    for line in text.split("\n"):
        body = line.lstrip(" \t")
        body = neutralise(body, limit) if body else ""
        if _folded(body[:1])[0].startswith("#"):
            body = "\\" + body
        shown.append(line[: len(line) - len(line.lstrip(" \t"))] + body if body else "")
    return "\n".join(shown)


@functools.lru_cache(maxsize=4096)
def neutralise_name(name: str) -> str:
    """``neutralise(name, MAX_PATH_CHARS)``, for a name a peer chose (an entry's id, a path), remembered:
    the same names come back hit after hit, and each ``neutralise`` runs its patterns again."""
    return neutralise(name, MAX_PATH_CHARS)


@functools.lru_cache(maxsize=1024)
def host_label(host: str | None, claimed: bool = False) -> str:
    """How an agent is told which machine wrote something: the ``Memsync-Host`` its commit names
    (``host``; None or empty: "?"), neutralised and bounded to ``MAX_HOST_CHARS``, and ``CLAIMED``
    after it when the commit names this machine but was not made here. Remembered: a memory has few
    hosts."""
    label = neutralise(host or "", MAX_HOST_CHARS) or "?"
    return f"{label} {CLAIMED}" if claimed else label
