"""The detectors: which lines of a text hold a credential, as written (no decoding, no normalising: the
caller, :mod:`memsync.secrets.text`, hands them what a reader will see).

Built on detect-secrets' pattern plugins (used directly, without its global settings or its eager
high-entropy word scan, which flags ordinary words) plus the token shapes it lacks. Generic
high-entropy strings are flagged only where they look like a credential: the value of a
``password``/``pw``/``token``/``secret``/``api_key`` assignment or of an ``Authorization`` header, a
password on a database command line (``mysql -pPASS``), a ``user/password`` pair where a login is meant,
and the bare secret keys of the clouds (an AWS secret access key, an Azure storage key or client
secret). Implements DESIGN "One sync cycle" step 2 (scanner) and invariant I6; spec: never store secrets.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from typing import Any

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
    r"(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
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
_PASSWORD_KEY = re.compile(r"pass|pw", re.IGNORECASE)
# Prose that states a password: "the DB password is hunter2" (checked by _looks_like_password).
_PASSWORD_SENTENCE = re.compile(
    r"""\b(?:pass(?:word|wd|phrase)|pwd)\s+(?:is|was)\s+["'`]?(?P<value>[^\s"'`]+?)["'`]?[.,;:!?)]*(?=\s|$)""",
    re.IGNORECASE,
)
_AUTH_HEADER = re.compile(
    r"\b(?:Authorization\s*:\s*)?(?:Bearer|Basic|token)\s+(?P<value>[A-Za-z0-9._~+/=-]{20,})"
)

_KEY_BLOCK_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")

# Token shapes detect-secrets 1.5 lacks or only covers in an older form, each with its gates (see _Detector).
_EXTRA_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("OpenAI-style API key", ("sk-",), re.compile(r"\bsk-(?:[a-z]+-)*[A-Za-z0-9_-]{32,}")),
    ("GitHub fine-grained token", ("github_pat_",), re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}")),
    ("GitHub Token", ("gh[pousr]_",), re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    (
        "GitLab Token",
        ("gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-",),
        re.compile(r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_.-]{20,}"),
    ),
    (
        "Slack Token",
        ("xox", "xapp-"),
        re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"),
    ),
    (
        "AWS Access Key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    ),
    ("Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Hugging Face token", ("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    (
        "JSON Web Token",
        ("eyJ",),
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    ("Private Key", ("-----BEGIN ",), _KEY_BLOCK_BEGIN),
    (
        "Basic Auth Credentials",
        ("://",),
        re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:(?P<value>[^\s/@]+)@[^\s/]+"),
    ),
    ("DigitalOcean token", ("_v1_",), re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b")),
    (
        "Azure client secret",
        ("Q~",),
        re.compile(r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])"),
    ),
    ("Azure storage key", ("==",), re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{86}==(?![A-Za-z0-9/+=])")),
)

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
class _Detector:
    """One check and its gates. A gate is a pattern led by a literal (fast to search) that matches on
    every line the check flags, with whether it is searched in the case-folded copy of the text (the
    lower-case gates of the checks that ignore case). The check runs only on the lines a gate matches,
    so the whole text costs one fast search per distinct gate."""

    gates: tuple[tuple[re.Pattern[str], bool], ...]
    scan: Callable[[str], Iterator[str]]


def _gated(
    scan: Callable[[str], Iterator[str]], gates: Iterable[str] = (), folded_gates: Iterable[str] = ()
) -> _Detector:
    return _Detector(
        (
            *((re.compile(gate), False) for gate in gates),
            *((re.compile(gate), True) for gate in folded_gates),
        ),
        scan,
    )


def _plugin_scan(plugin: Any) -> Callable[[str], Iterator[str]]:
    def scan(line: str) -> Iterator[str]:
        for value in plugin.analyze_string(line):
            if not _is_placeholder(value):
                yield str(plugin.secret_type)

    return scan


def _pattern_scan(name: str, pattern: re.Pattern[str]) -> Callable[[str], Iterator[str]]:
    def scan(line: str) -> Iterator[str]:
        for match in pattern.finditer(line):
            value = match.groupdict().get("value") or match.group(0)
            if not _is_placeholder(value):
                yield name

    return scan


def _assignment_scan(line: str) -> Iterator[str]:
    for match in _ASSIGNMENT.finditer(line):
        value = match.group("value")
        check: Callable[[str], bool] = (
            _looks_like_password if _PASSWORD_KEY.search(match.group("key")) else _looks_like_token
        )
        if check(value):
            yield "Secret assignment"


def _password_sentence_scan(line: str) -> Iterator[str]:
    for match in _PASSWORD_SENTENCE.finditer(line):
        if _looks_like_password(match.group("value")):
            yield "Password in prose"


def _auth_header_scan(line: str) -> Iterator[str]:
    for match in _AUTH_HEADER.finditer(line):
        if _looks_like_token(match.group("value")):
            yield "Authorization header"


# A bare AWS secret access key: 40 characters of base64's alphabet standing alone (a longer run is a blob,
# decoded and scanned by the caller), with upper and lower case and digits and random-looking.
_BARE_CLOUD_KEY = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


# Detectors of a value with no prefix of its own: gluing a word onto a neighbouring token can make one.
BARE = frozenset({"AWS secret access key", "Azure storage key", "Azure client secret"})


def _bare_cloud_key_scan(line: str) -> Iterator[str]:
    for match in _BARE_CLOUD_KEY.finditer(line):
        value = match.group(0)
        if (
            re.search(r"[a-z]", value)
            and re.search(r"[A-Z]", value)
            and re.search(r"[0-9]", value)
            and _entropy(value) >= 4.2
        ):
            yield "AWS secret access key"


# A password given on a database or ssh command line: mysql -pPASS (no space: with one, mysql prompts),
# mysqldump/mariadb alike, sshpass -p PASS. The value is literal there (a variable would be $VAR).
_COMMAND_PASSWORD = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p(?P<value>[^\s'\"`]{3,})"
    r"|\bsshpass\s+-p\s*(?P<sshpass>[^\s'\"`]{3,})"
)


def _command_password_scan(line: str) -> Iterator[str]:
    for match in _COMMAND_PASSWORD.finditer(line):
        value = (match.group("value") or match.group("sshpass")).rstrip(";,.)&|")
        if len(value) >= 3 and not value.startswith("$") and not _is_placeholder(value):
            yield "Password on a command line"


# user/password with no keyword ("log in as admin/Xk9#mP2q", "`root`/`S3cret!`"): a word, a slash and a
# password-like value, not part of a path, a URL or a file name. Only where a login is meant: both halves
# quoted alike, a well-known account name, or a login word just before.
# The login is a user name (lower case after its first letter: not a ticket id such as DEF-053); the
# password mixes cases and digits, or holds a symbol (not a version, a branch or a ticket).
_USER_PASSWORD = re.compile(
    r"""(?<![\w/.:@$%~-])(?P<q>[`'"]?)(?P<user>[A-Za-z][a-z0-9._-]{0,31})(?P=q)/"""
    r"""(?P<q2>[`'"]?)(?P<value>[^\s/`'"<>]{6,64})(?P=q2)(?!/)"""
)
_PASSWORD_SYMBOL = re.compile(r"[!@#$%^&*+=~?]")
_ACCOUNTS = frozenset(
    (
        *("admin", "administrator", "root", "superuser", "sa", "sysadmin", "user", "guest", "test"),
        *("demo", "postgres", "mysql", "oracle", "elastic", "kibana", "grafana", "jenkins", "keycloak"),
        *("ubuntu", "pi", "ec2-user"),
    )
)
_LOGIN_WORDS = re.compile(
    r"\b(?:log(?:ged)?[ -]?in|logon|sign(?:ed)?[ -]?in|creds?|credentials?|account|user(?:name)?|auth)\b",
    re.IGNORECASE,
)


def _user_password_scan(line: str) -> Iterator[str]:
    for match in _USER_PASSWORD.finditer(line):
        value = match.group("value").rstrip(".,;:!?)]}")
        if "." in value or not _looks_like_password(value):
            continue
        mixed = bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value) and re.search(r"[0-9]", value))
        if not (mixed or _PASSWORD_SYMBOL.search(value)):
            continue
        quoted = bool(match.group("q")) and match.group("q") == match.group("q2")
        if (
            quoted
            or match.group("user").lower() in _ACCOUNTS
            or _LOGIN_WORDS.search(line, max(0, match.start() - 40), match.start())
        ):
            yield "User and password"


@cache
def _detectors() -> tuple[_Detector, ...]:
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
        *(_gated(_pattern_scan(name, pattern), gates) for name, gates, pattern in _EXTRA_PATTERNS),
        # _ASSIGNMENT's keywords, each followed by the rest of a name, a quote and the assignment.
        _gated(
            _assignment_scan,
            folded_gates=(
                keyword + r"""[a-z0-9_-]*\\?["']?\s*[:=]"""
                for keyword in ("pass", "pw", "secret", "token", "key", "credential")
            ),
        ),
        _gated(
            _password_sentence_scan,
            folded_gates=(r"pass(?:word|wd|phrase)\s+(?:is|was)\s", r"pwd\s+(?:is|was)\s"),
        ),
        _gated(_auth_header_scan, ("Bearer", "Basic", "token")),
        _gated(_bare_cloud_key_scan, (r"[A-Za-z0-9/+]{40}",)),
        _gated(_command_password_scan, (r"\s-p", "sshpass")),
        _gated(_user_password_scan, (r"""[a-z0-9._`'"-]/[`'"]?[^\s/`'"<>]{6}""",)),
    )


# Up to this many characters, one search for any gate is cheaper than one search per gate; past it, the
# literal-led searches of single gates are (a union of patterns loses their literal prefix scan).
_SHORT_TEXT = 4096


@cache
def _any_gate() -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """One pattern for every plain gate and one for every case-folded gate: a text neither matches has no
    line a detector could flag, so it costs two searches instead of one per gate (names, small files).
    None when a detector runs on every line (a plugin without gates)."""
    gates = {gate for detector in _detectors() for gate in detector.gates}
    if any(pattern.pattern == _EVERY_LINE for pattern, _ in gates):
        return None

    def union(folded: bool) -> re.Pattern[str]:
        patterns = sorted(pattern.pattern for pattern, in_folded in gates if in_folded == folded)
        return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))

    return union(False), union(True)


def _case_fold(text: str) -> str:
    """``text`` lower-cased with the same length, so that a literal found in it at an offset is where
    an ``re.IGNORECASE`` search of ``text`` finds it."""
    for char, ascii_char in _FOLD_TO_ASCII:
        if char in text:
            text = text.replace(char, ascii_char)
    return text.lower()


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value))


def _looks_like_password(value: str) -> bool:
    """A password value: not a placeholder or a reference, and not prose (``per-user``, ``auto-generated``):
    letters with digits, or lower case, upper case and symbols together, or a passphrase of 12 or more
    letters of one case run together (``correcthorsebatterystaple``; ``AuthenticationRequired`` reads as
    a name)."""
    if len(value) < 6 or _is_placeholder(value):
        return False
    if len(value) >= 12 and value.isalpha() and (value.islower() or value.isupper()):
        return True
    if _REFERENCE.match(value):
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


_PRIVATE_KEY = "Private Key"
_KEY_BLOCK_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# What a key block holds: base64 lines, RFC 1421 headers (Proc-Type: ...), blank lines, the END line.
_KEY_BLOCK_BODY = re.compile(r"^\s*(?:[A-Za-z0-9+/=]*|[A-Za-z-]+: .*|-----END .*)\s*$")


def detect(text: str) -> list[Finding]:
    """Find lines of ``text`` that hold a secret, as written: one Finding per (line, detector), sorted.

    Lines are split on ``\\n`` only (a bare CR stays inside its line). Finding.line is 1-based. Every line
    of a private key block is flagged: from the BEGIN line to the END line, or to the last line that looks
    like key material (base64, ``Name: value`` headers) when the END line is missing.
    Never raises on any input; cost is linear (a few µs per typical line: each detector's gate is searched
    over the whole text at once, and the detector runs only on the lines its gate matches), so it can run
    on every published line. Implements DESIGN invariant I6 ("No secret leaves the machine").
    """
    lines = text.split("\n")
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    findings: set[Finding] = set()
    key_body: set[int] = set()  # 0-based indexes of the lines inside a private key block
    for match in _KEY_BLOCK_BEGIN.finditer(text):
        index = bisect_right(starts, match.start()) - 1
        if index in key_body or _KEY_BLOCK_END.search(lines[index]):
            continue
        # The body of a private key block is plain base64 that no detector knows: flag it whole.
        for body in range(index + 1, len(lines)):
            if not _KEY_BLOCK_BODY.match(lines[body]):
                break
            key_body.add(body)
            if lines[body].strip():
                findings.add(Finding(body + 1, _PRIVATE_KEY))
            if _KEY_BLOCK_END.search(lines[body]):
                break
    folded = _case_fold(text)
    any_gate = _any_gate() if len(text) <= _SHORT_TEXT else None
    if any_gate is not None and not (any_gate[0].search(text) or any_gate[1].search(folded)):
        return sorted(findings, key=lambda f: (f.line, f.detector))
    gated: dict[tuple[re.Pattern[str], bool], set[int]] = {}  # gate -> 0-based indexes of its lines
    for detector in _detectors():
        candidates: set[int] = set()
        for gate in detector.gates:
            if gate not in gated:
                pattern, in_folded = gate
                gated[gate] = {
                    bisect_right(starts, match.start()) - 1
                    for match in pattern.finditer(folded if in_folded else text)
                }
            candidates |= gated[gate]
        for index in candidates - key_body:
            findings.update(Finding(index + 1, name) for name in detector.scan(lines[index]))
    return sorted(findings, key=lambda f: (f.line, f.detector))
