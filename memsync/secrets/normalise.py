"""Text as a reader sees it, for the detectors: compatibility forms folded (NFKC: ``ghp_`` written in
full-width forms, U+FF47 U+FF48 U+FF50 U+FF3F, is ``ghp_``) and what renders as nothing removed
(zero-width and other format characters, combining marks, control characters, lone surrogates), so a key
split by U+200B or written in full-width forms is the key (DESIGN "Hostile input": the scanner sees
normalised text)."""

from __future__ import annotations

import re
import unicodedata

# What renders as nothing, or as part of the character before it: C0/C1 controls but tab, soft hyphen,
# combining marks (general and for symbols), zero-width spaces and joiners, bidi controls, word joiner
# and invisible operators, variation selectors, the BOM, Hangul and Mongolian fillers, interlinear
# annotation, tag characters, musical formatting, lone surrogates. Each of them hid a token from a
# pattern that a reader (a person, an agent) still reads as that token.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u0300-\u036f\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u1ab0-\u1aff\u1dc0-\u1dff\u200b-\u200f\u202a-\u202e\u2060-\u206f\u20d0-\u20ff\u3164\ufe00-\ufe0f"
    "\ufe20-\ufe2f\ufeff\uffa0\ufff0-\ufffb\ud800-\udfff\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def normalise(line: str) -> str:
    """``line`` in NFKC with every invisible character above removed. Keeps ``\\n`` (a caller passing
    several lines keeps their count) and tab. Pure; linear."""
    if line.isascii():
        return line if line.isprintable() else _INVISIBLE.sub("", line)
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", _INVISIBLE.sub("", line)))
