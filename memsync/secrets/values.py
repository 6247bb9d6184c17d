"""What a candidate secret value looks like: a placeholder, a reference to another variable, a password, a
random token (DESIGN invariant I6: the checks of :mod:`.shapes` and :mod:`.gates` judge values here).
"""

from __future__ import annotations

import math
import re
from collections import Counter

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


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def is_placeholder(value: str) -> bool:
    """True for a value people write where a secret would go (``<password>``, ``${TOKEN}``, ``xxxx``)."""
    return bool(_PLACEHOLDER.match(value))


def looks_like_password(value: str) -> bool:
    """A password value: not a placeholder or a reference, and not prose (``per-user``, ``auto-generated``):
    letters with digits, or lower case, upper case and symbols together, or a passphrase of 12 or more
    letters of one case run together (``correcthorsebatterystaple``; ``AuthenticationRequired`` reads as
    a name)."""
    if len(value) < 6 or is_placeholder(value):
        return False
    if len(value) >= 12 and value.isalpha() and (value.islower() or value.isupper()):
        return True
    if _REFERENCE.match(value):
        return False
    lower, upper = bool(re.search(r"[a-z]", value)), bool(re.search(r"[A-Z]", value))
    digit, symbol = bool(re.search(r"[0-9]", value)), bool(re.search(r"[^A-Za-z0-9]", value))
    return ((lower or upper) and digit) or (lower and upper and symbol)


def looks_like_token(value: str) -> bool:
    """A random credential: long, letters and digits mixed, high entropy; not a placeholder or reference."""
    if len(value) < 16 or is_placeholder(value) or _REFERENCE.match(value):
        return False
    if not (re.search(r"[A-Za-z]", value) and re.search(r"[0-9]", value)):
        return False
    return entropy(value) >= 3.5
