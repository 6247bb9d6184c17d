"""The secret scanner: finds credentials in text before it is written to memory or leaves the machine.

Built on detect-secrets' pattern plugins (used directly, without its global settings or its eager
high-entropy word scan, which flags ordinary words) plus the token shapes it lacks. Generic
high-entropy strings are flagged only where they look like a credential: the value of a
``password``/``token``/``secret``/``api_key`` assignment or of an ``Authorization`` header.
Implements DESIGN "One sync cycle" step 2 (scanner) and invariant I6; spec: never store secrets.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

# Public IPs are not credentials, and memory legitimately names hosts.
_SKIPPED_PLUGINS = frozenset({"IPPublicDetector"})


@dataclass(frozen=True)
class Finding:
    """One flagged line. The secret value itself is deliberately not kept, so it is never echoed."""

    line: int  # 1-based within the scanned text
    detector: str


# Values people write where a secret would go: <password>, ${TOKEN}, {{ secret }}, $VAR, ***, xxxx, ...
_PLACEHOLDER = re.compile(
    r"""^(?:<[^>]*>?|\$\{[^}]*\}?|\{\{.*|\$[A-Za-z_][A-Za-z0-9_]*|%[sd(].*|\*+|[xX]{3,}|\.{3,}|…
        |(?:your|my|the|some|example|dummy|fake|test|sample|placeholder|redacted|changeme)(?:[-_.].*)?
        |none|null|nil|true|false|required|optional|empty|hidden|secret|password|token|unset|todo|tbd)$""",
    re.IGNORECASE | re.VERBOSE,
)
# A value that names another variable instead of holding one: GITHUB_TOKEN, os.environ[...], self.token.
_REFERENCE = re.compile(
    r"^(?:[A-Z][A-Z0-9_]*|[a-z_]+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\.[A-Za-z_]\w*|[\[(].*))$"
)

_KEYWORD = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
    r"|client[_-]?secret|auth[_-]?token|credentials?)"
)
# key = value / key: value / "key": "value"; the keyword may sit inside a longer name
# (KC_ADMIN_PASSWORD, aws_secret_access_key), and JSON may escape the quotes.
_ASSIGNMENT = re.compile(
    # The keyword starts a word or a camelCase hump (dbPassword), not the middle of one (bypass).
    r"""(?-i:(?<![A-Za-z])|(?=[A-Z]))(?P<key>""" + _KEYWORD + r""")"""
    r"""[A-Za-z0-9_-]*\\?["']?\s*(?::=|=>|=|:)\s*\\?["'`]?"""
    r"""(?P<value>[^\s"'`,;)\]}\\]+)""",
    re.IGNORECASE,
)
_PASSWORD_KEY = re.compile(r"pass|pwd", re.IGNORECASE)
_AUTH_HEADER = re.compile(
    r"\b(?:Authorization\s*:\s*)?(?:Bearer|Basic|token)\s+(?P<value>[A-Za-z0-9._~+/=-]{20,})"
)

_KEY_BLOCK_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")

# Token shapes detect-secrets 1.5 lacks or only covers in an older form.
_EXTRA_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OpenAI-style API key", re.compile(r"\bsk-(?:[a-z]+-)*[A-Za-z0-9_-]{32,}")),
    ("GitHub fine-grained token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}")),
    ("GitHub Token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    ("GitLab Token", re.compile(r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_.-]{20,}")),
    ("Slack Token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}")),
    ("AWS Access Key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("Private Key", _KEY_BLOCK_BEGIN),
    ("Basic Auth Credentials", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:(?P<value>[^\s/@]+)@[^\s/]+")),
)


@cache
def _plugins() -> tuple[Any, ...]:
    """detect-secrets' pattern detectors, built once (they are stateless)."""
    classes: Iterable[type[Any]] = get_mapping_from_secret_type_to_class().values()
    return tuple(
        cls() for cls in sorted(classes, key=lambda c: c.__name__)
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in _SKIPPED_PLUGINS
    )


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value))


def _looks_like_password(value: str) -> bool:
    """A password value: not a placeholder or a reference, and not prose (``per-user``, ``auto-generated``):
    letters with digits, or lower case, upper case and symbols together."""
    if len(value) < 6 or _is_placeholder(value) or _REFERENCE.match(value):
        return False
    lower, upper = bool(re.search(r"[a-z]", value)), bool(re.search(r"[A-Z]", value))
    digit, symbol = bool(re.search(r"[0-9]", value)), bool(re.search(r"[^A-Za-z0-9]", value))
    return ((lower or upper) and digit) or (lower and upper and symbol)


def _looks_like_token(value: str) -> bool:
    """A random credential: long, letters and digits mixed, high entropy; not a placeholder or reference."""
    if len(value) < 16 or _is_placeholder(value) or _REFERENCE.match(value):
        return False
    if not (re.search(r"[A-Za-z]", value) and re.search(r"[0-9]", value)):
        return False
    return _entropy(value) >= 3.5


def _scan_line(line: str) -> Iterator[str]:
    """Yield the detector name of every finding on one line (duplicates possible)."""
    for plugin in _plugins():
        for value in plugin.analyze_string(line):
            if not _is_placeholder(value):
                yield str(plugin.secret_type)
    for name, pattern in _EXTRA_PATTERNS:
        for match in pattern.finditer(line):
            value = match.groupdict().get("value") or match.group(0)
            if not _is_placeholder(value):
                yield name
    for match in _ASSIGNMENT.finditer(line):
        value = match.group("value")
        check: Callable[[str], bool] = (
            _looks_like_password if _PASSWORD_KEY.search(match.group("key")) else _looks_like_token
        )
        if check(value):
            yield "Secret assignment"
    for match in _AUTH_HEADER.finditer(line):
        if _looks_like_token(match.group("value")):
            yield "Authorization header"


_PRIVATE_KEY = "Private Key"
_KEY_BLOCK_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# What a key block holds: base64 lines, RFC 1421 headers (Proc-Type: ...), blank lines, the END line.
_KEY_BLOCK_BODY = re.compile(r"^\s*(?:[A-Za-z0-9+/=]*|[A-Za-z-]+: .*|-----END .*)\s*$")
_QUICK_REJECT = re.compile(r"[A-Za-z0-9]{16}|[:=]|-----|://|xox", re.ASCII)


def scan_text(text: str) -> list[Finding]:
    """Find lines of ``text`` that hold a secret: one Finding per (line, detector), sorted.

    Lines are split on ``\\n`` only (a bare CR stays inside its line). Finding.line is 1-based. Every line
    of a private key block is flagged: from the BEGIN line to the END line, or to the last line that looks
    like key material (base64, ``Name: value`` headers) when the END line is missing.
    Never raises on any input; cost is linear (about 0.1 ms per typical line), so it can run on every
    published line. Implements DESIGN invariant I6 ("No secret leaves the machine").
    """
    findings: set[Finding] = set()
    in_key_block = False
    for number, line in enumerate(text.split("\n"), start=1):
        if in_key_block and _KEY_BLOCK_BODY.match(line):
            # The body of a private key block is plain base64 that no detector knows: flag it whole.
            if line.strip():
                findings.add(Finding(number, _PRIVATE_KEY))
            in_key_block = not _KEY_BLOCK_END.search(line)
            continue
        in_key_block = False
        # Every detector needs a run of 16 token characters, an assignment, a PEM fence, a URL or xox.
        if not _QUICK_REJECT.search(line):
            continue
        findings.update(Finding(number, detector) for detector in _scan_line(line))
        if _KEY_BLOCK_BEGIN.search(line) and not _KEY_BLOCK_END.search(line):
            in_key_block = True
    return sorted(findings, key=lambda f: (f.line, f.detector))
