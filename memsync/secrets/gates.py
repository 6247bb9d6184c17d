"""The detectors and their gates: detect-secrets' pattern plugins (used directly, without its global
settings or its eager high-entropy word scan, which flags ordinary words) and the checks of
:mod:`.shapes`, each run only on the lines a cheap literal-led gate matches (DESIGN invariant I6).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from memsync.secrets.shapes import (
    EXTRA_PATTERNS,
    PASSWORD_FOR,
    assignment_scan,
    auth_header_scan,
    bare_cloud_key_scan,
    bare_userinfo_scan,
    command_password_scan,
    password_phrase_scan,
    password_sentence_scan,
    pattern_scan,
    user_password_scan,
)
from memsync.secrets.values import is_placeholder

# Public IPs are not credentials, and memory legitimately names hosts.
_SKIPPED_PLUGINS = frozenset({"IPPublicDetector"})

# In the case-folded text: what follows the keyword in detect-secrets' keyword plugins (Cloudant, IBM,
# Softlayer), the quote, the assignment and the first 24 characters of the value. Prose names keys and
# passwords often; it rarely assigns them a 24-character value.
_KEYWORD_VALUE = r"""["']?\]? *(?:=|:|:=|=>| +|::) *["']?[0-9a-z_-]{24}"""
_PLUGIN_KEYWORDS = tuple(keyword + _KEYWORD_VALUE for keyword in ("key", "pwd", "password", "pass", "token"))

# The gates of each detect-secrets 1.5 plugin: (on the text, on the case-folded text), read off its
# patterns. Its patterns (several try look-behinds and keyword alternations at every position) cost
# ~0.2 ms per line; a plugin missing here (a newer detect-secrets) runs on every line.
_PLUGIN_GATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "AWSKeyDetector": (("A3T", "ABIA", "ACCA", "AKIA", "ASIA"), ("aws",)),
    "ArtifactoryDetector": (("AKC", r"AP[\dABCDEF]"), ()),
    "AzureStorageKeyDetector": (("AccountKey=",), ()),
    "BasicAuthDetector": (("://",), ()),
    "CloudantDetector": ((), (*_PLUGIN_KEYWORDS, "pw" + _KEYWORD_VALUE, r"\.cloudant\.com")),
    "DiscordBotTokenDetector": ((r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}",), ()),
    "GitHubTokenDetector": (("gh[pousr]_",), ()),
    "GitLabTokenDetector": (("gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-", "GR1348941"), ()),
    "IbmCloudIamDetector": ((), _PLUGIN_KEYWORDS),
    "IbmCosHmacDetector": ((), ("key" + _KEYWORD_VALUE,)),
    "JwtTokenDetector": (("eyJ",), ()),
    "MailchimpDetector": (("-us[0-9]",), ()),
    "NpmDetector": (("/:_authToken=",), ()),
    "OpenAIDetector": (("T3BlbkFJ",), ()),
    "PrivateKeyDetector": (("BEGIN ", "PuTTY-User-Key-File-2"), ()),
    "PypiTokenDetector": (("pypi-AgE",), ()),
    "SendGridDetector": ((r"SG\.",), ()),
    "SlackDetector": ((), ("xox", r"hooks\.slack\.com")),
    "SoftlayerDetector": ((), (*_PLUGIN_KEYWORDS, "softlayer")),
    "SquareOAuthDetector": (("sq0csp-",), ()),
    "StripeDetector": (("k_live_",), ()),
    "TelegramBotTokenDetector": ((":[0-9A-Za-z_-]{35}",), ()),
    "TwilioKeyDetector": (("AC[a-z0-9]{32}", "SK[a-z0-9]{32}"), ()),
}
_EVERY_LINE = "(?m)^"
# The characters that re.IGNORECASE matches to an ASCII letter although str.lower() does not map them to
# one (İ also lowers to two characters, which would shift offsets).
_FOLD_TO_ASCII = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"))


@dataclass(frozen=True)
class Detector:
    """One check and its gates. A gate is a pattern led by a literal (fast to search) that matches on
    every line the check flags, with whether it is searched in the case-folded copy of the text (the
    lower-case gates of the checks that ignore case). The check runs only on the lines a gate matches,
    so the whole text costs one fast search per distinct gate."""

    gates: tuple[tuple[re.Pattern[str], bool], ...]
    scan: Callable[[str], Iterator[str]]


def _gated(
    scan: Callable[[str], Iterator[str]], gates: Iterable[str] = (), folded_gates: Iterable[str] = ()
) -> Detector:
    return Detector(
        (
            *((re.compile(gate), False) for gate in gates),
            *((re.compile(gate), True) for gate in folded_gates),
        ),
        scan,
    )


def _plugin_scan(plugin: Any) -> Callable[[str], Iterator[str]]:
    def scan(line: str) -> Iterator[str]:
        for value in plugin.analyze_string(line):
            if not is_placeholder(value):
                yield str(plugin.secret_type)

    return scan


@cache
def detectors() -> tuple[Detector, ...]:
    """detect-secrets' pattern detectors (stateless, built once) and ours, each with its gates."""
    # Imported on first use: detect-secrets (and the requests it pulls in) costs ~50 ms to import, paid
    # by every CLI call and git merge-driver run that imports this module without scanning.
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    classes: Iterable[type[Any]] = get_mapping_from_secret_type_to_class().values()
    plugins = [
        cls()
        for cls in sorted(classes, key=lambda c: c.__name__)
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in _SKIPPED_PLUGINS
    ]
    return (
        *(
            _gated(_plugin_scan(p), *_PLUGIN_GATES.get(type(p).__name__, ((_EVERY_LINE,), ())))
            for p in plugins
        ),
        *(_gated(pattern_scan(name, pattern), gates) for name, gates, pattern in EXTRA_PATTERNS),
        # _ASSIGNMENT's keywords, each followed by the rest of a name, a quote and the assignment.
        _gated(
            assignment_scan,
            folded_gates=(
                keyword + r"""[a-z0-9_-]*\\?["']?\s*[:=]"""
                for keyword in ("pass", "pw", "secret", "token", "key", "credential")
            ),
        ),
        _gated(
            password_sentence_scan,
            folded_gates=(
                *(rf"{key}\s+(?:is|was)\s" for key in ("pass(?:word|wd|phrase)", "pwd")),
                *(rf"{key}\s+{PASSWORD_FOR}\s" for key in ("pass(?:word|wd|phrase)", "pwd")),
            ),
        ),
        # The password words of shapes' phrases, each a literal (folded: "Passwort", "PW").
        _gated(
            password_phrase_scan,
            folded_gates=("pass", "pw", "pin", "kennwort", "contrase", "senha", "パスワード"),
        ),
        _gated(auth_header_scan, ("Bearer", "Basic", "token")),
        _gated(bare_cloud_key_scan, (r"[A-Za-z0-9/+]{40}",)),
        _gated(command_password_scan, (r"\s-p", "sshpass", r"-u[\s=]", "--user")),
        _gated(
            user_password_scan,
            (r"""[a-z0-9._`'"-]/[`'"]?[^\s/`'"<>]{6}""", r"""[a-z0-9._`'"-] / [`'"]?[^\s/`'"<>]{6}"""),
        ),
        _gated(bare_userinfo_scan, (r"[^\s/@:]@[A-Za-z0-9]",)),
    )


# Up to this many characters, one search for any gate is cheaper than one search per gate; past it, the
# literal-led searches of single gates are (a union of patterns loses their literal prefix scan).
SHORT_TEXT = 4096


@cache
def any_gate() -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """One pattern for every plain gate and one for every case-folded gate: a text neither matches has no
    line a detector could flag, so it costs two searches instead of one per gate (names, small files).
    None when a detector runs on every line (a plugin without gates)."""
    gates = {gate for detector in detectors() for gate in detector.gates}
    if any(pattern.pattern == _EVERY_LINE for pattern, _ in gates):
        return None

    def union(folded: bool) -> re.Pattern[str]:
        patterns = sorted(pattern.pattern for pattern, in_folded in gates if in_folded == folded)
        return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))

    return union(False), union(True)


def case_fold(text: str) -> str:
    """``text`` lower-cased with the same length, so that a literal found in it at an offset is where
    an ``re.IGNORECASE`` search of ``text`` finds it."""
    for char, ascii_char in _FOLD_TO_ASCII:
        if char in text:
            text = text.replace(char, ascii_char)
    return text.lower()
