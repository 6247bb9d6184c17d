"""What a line says once decoded, for the detectors: backslash escapes (``\\u0041KIA``, ``https:\\/\\/``),
percent-encoding (``%41KIA``, ``p%40ss``), HTML character references (``&#65;KIA``) and base64 runs
(standard or URL-safe) that decode to text, each to a depth of two (base64 of a percent-encoded URL).
A reader, or an agent asked to, decodes them; so does the scanner (DESIGN "Hostile input")."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from urllib.parse import unquote

MAX_DEPTH = 2
MAX_VARIANTS = 16  # per line: enough for every encoding of every token on it
# A base64 run long enough to hold a token, and short enough to be one (a longer blob is an image or an
# archive, not something an agent wrote down as text).
MIN_BASE64 = 16
MAX_BASE64 = 16 * 1024

_ESCAPE = re.compile(r"\\(?:u\{?([0-9a-fA-F]{4,6})\}?|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{MIN_BASE64},{MAX_BASE64}}}={{0,2}}")
_TEXT_CHARS = re.compile(r"[\t\n\r\x20-\x7e\u00a0-\uffff]")


def _unescape_one(match: re.Match[str]) -> str:
    code = match.group(1) or match.group(2) or match.group(3)
    if code is not None:
        value = int(code, 16)
        return chr(value) if value < 0x110000 else match.group(0)
    char = match.group(4)
    return _SIMPLE_ESCAPES.get(char, char)


def _unescape(line: str) -> str | None:
    return _ESCAPE.sub(_unescape_one, line) if "\\" in line else None


def _unpercent(line: str) -> str | None:
    return unquote(line, errors="replace") if "%" in line and _PERCENT.search(line) else None


def _unentity(line: str) -> str | None:
    if "&" not in line or not _ENTITY.search(line):
        return None
    import html  # its entity table costs a few ms to import, paid only by a line that needs it

    return html.unescape(line)


def _as_text(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 and reads as text (at least 8 characters, 90% printable)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8 or len(_TEXT_CHARS.findall(text)) < 0.9 * len(text):
        return None
    return text


def _unbase64(line: str) -> str | None:
    decoded = []
    for match in _BASE64_RUN.finditer(line):
        run = match.group(0)
        if run.islower() or run.isupper():
            continue  # base64 of text mixes the cases; words, paths, ids and hex do not
        padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
        for altchars in (b"+/", b"-_"):
            try:
                data = base64.b64decode(padded, altchars=altchars, validate=True)
            except (binascii.Error, ValueError):
                continue
            text = _as_text(data)
            if text is not None:
                decoded.append(text)
                break
    return "\n".join(decoded) if decoded else None


_DECODERS: tuple[Callable[[str], str | None], ...] = (_unescape, _unpercent, _unentity, _unbase64)


def variants(line: str) -> list[str]:
    """The texts ``line`` decodes to (each different from what it came from; possibly several lines),
    to a depth of ``MAX_DEPTH``, at most ``MAX_VARIANTS``. ``[]`` for a line with nothing encoded in
    it, which costs three substring searches and one pattern search. Never raises."""
    found: list[str] = []
    pending = [(line, 0)]
    while pending and len(found) < MAX_VARIANTS:
        text, depth = pending.pop()
        for decoder in _DECODERS:
            decoded = decoder(text)
            if decoded is not None and decoded != text and decoded not in found:
                found.append(decoded)
                if depth + 1 < MAX_DEPTH:
                    pending.append((decoded, depth + 1))
    return found[:MAX_VARIANTS]
