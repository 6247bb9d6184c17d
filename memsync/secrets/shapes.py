"""The credential shapes memsync checks itself, beside detect-secrets' plugins: token prefixes it lacks,
secret assignments, passwords in prose and on command lines, ``user/password`` pairs, authorization
headers and the clouds' bare secret keys (DESIGN invariant I6). Each check maps one line to the names of
what it flags there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from memsync.secrets.values import entropy, is_placeholder, looks_like_password, looks_like_token

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
# Prose that states a password: "the DB password is hunter2", "the password for prod is hunter2" (what it
# is for in up to four words; checked by looks_like_password).
PASSWORD_FOR = r"(?:for|of|on|to|at|in)"
_PASSWORD_SENTENCE = re.compile(
    rf"""\b(?:pass(?:word|wd|phrase)|pwd)(?:\s+{PASSWORD_FOR}(?:\s+[^\s"'`]+){{1,4}}?)?\s+(?:is|was)\s+"""
    r"""["'`]?(?P<value>[^\s"'`]+?)["'`]?[.,;:!?)]*(?=\s|$)""",
    re.IGNORECASE,
)
_AUTH_HEADER = re.compile(
    r"\b(?:Authorization\s*:\s*)?(?:Bearer|Basic|token)\s+(?P<value>[A-Za-z0-9._~+/=-]{20,})"
)

# A crypt(3) password hash as /etc/shadow holds it (and htpasswd, database dumps, config files):
# $id$[rounds=N$]salt$hash for MD5 (and htpasswd's apr1), SHA-256/512, yescrypt, scrypt, bcrypt
# ($2b$cost$ salt+hash) and Argon2's PHC string. Words are tried against it offline: a credential.
_CRYPT = r"[./0-9A-Za-z]"
PASSWORD_HASH = re.compile(
    r"(?<![\w$])(?:"
    rf"\$(?:1|5|6|md5|apr1)\$(?:rounds=\d+\$)?{_CRYPT}{{1,16}}\${_CRYPT}{{22,86}}"
    rf"|\$(?:y|gy|7)\${_CRYPT}+\${_CRYPT}*\${_CRYPT}{{43}}"
    rf"|\$2[abxy]?\$\d\d\${_CRYPT}{{53}}"
    r"|\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]{16,}"
    rf")(?!{_CRYPT})"
)

KEY_BLOCK_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")

# Token shapes detect-secrets 1.5 lacks or only covers in an older form, each with its gates (see _Detector).
EXTRA_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
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
    ("Private Key", ("-----BEGIN ",), KEY_BLOCK_BEGIN),
    (
        "Basic Auth Credentials",
        ("://",),
        re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]*:(?P<value>[^\s/@]+)@[^\s/]+"),
    ),
    ("DigitalOcean token", ("_v1_",), re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b")),
    (
        "Azure client secret",
        ("Q~",),
        re.compile(r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])"),
    ),
    ("Azure storage key", ("==",), re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{86}==(?![A-Za-z0-9/+=])")),
    ("Password hash", (r"\$(?:[1567y]|gy|2[abxy]?|md5|apr1)\$", r"\$argon2"), PASSWORD_HASH),
)


def pattern_scan(name: str, pattern: re.Pattern[str]) -> Callable[[str], Iterator[str]]:
    """The check of one token ``pattern`` named ``name``: flags a match whose value is not a placeholder."""

    def scan(line: str) -> Iterator[str]:
        for match in pattern.finditer(line):
            value = match.groupdict().get("value") or match.group(0)
            if not is_placeholder(value):
                yield name

    return scan


def assignment_scan(line: str) -> Iterator[str]:
    """``Secret assignment`` for each ``password = ...``/``token: ...`` whose value looks like one."""
    for match in _ASSIGNMENT.finditer(line):
        value = match.group("value")
        check: Callable[[str], bool] = (
            looks_like_password if _PASSWORD_KEY.search(match.group("key")) else looks_like_token
        )
        if check(value):
            yield "Secret assignment"


def password_sentence_scan(line: str) -> Iterator[str]:
    """``Password in prose`` for each "the password is X" whose X looks like a password."""
    for match in _PASSWORD_SENTENCE.finditer(line):
        if looks_like_password(match.group("value")):
            yield "Password in prose"


# Any phrasing that gives a password: a password word (a few languages), up to four words on what it is
# for, a separator and the value ("password for the staging db: X", "prod pw is X", "password for prod — X",
# "das Passwort ist X"), or the value right after a long password word ("prod's passwd X", "with password
# X"). The value must read as a password (:func:`_strong_password`, 8 or more characters): prose, a path, a
# placeholder or "stored in vault" never does.
_PASSWORD_WORDS = (
    r"(?:\b(?:pass(?:word|wd|phrase|code|wort)?|pwd|pw|pin|mot de passe|kennwort|contrase[ñn]a|senha)\b"
    r"|パスワード)"
)
_PASSWORD_WORD = re.compile(_PASSWORD_WORDS, re.IGNORECASE)
# Short words that are also verbs or nouns of their own ("tests pass with X", "pin the version"): only
# with a separator after them, and "with" is none for them.
_SHORT_PASSWORD_WORDS = frozenset(("pass", "pw", "pin"))
# "is" in a few languages, a colon, an equals sign, dashes (em, en), a slash; "with" after a long word.
_SEPARATORS = frozenset(
    ("is", "was", "are", ":", "=", "\u2014", "\u2013", "-", "--", "/", "->", "=>", "=:", "est", "ist")
) | frozenset(("es", "é", "は", "with"))
_PHRASE_WORDS = 4
_VALUE_STRIP = "\"'`.,;:!?)]}*"
_NOT_VALUES = frozenset(("1password",))


def _phrase_value(word: str) -> bool:
    value = word.strip(_VALUE_STRIP).lstrip("\"'`([{*")
    return (
        len(value) >= 8
        and "/" not in value
        and not value.startswith(("-", "$", "%"))
        and value.lower() not in _NOT_VALUES
        and _strong_password(value)
    )


def _separates(word: str, short: bool) -> bool:
    """Whether ``word`` separates a password word (``short``: pass, pw, pin) from its value."""
    folded = word.lower()
    return (folded in _SEPARATORS and not (short and folded == "with")) or (
        len(word) > 1 and word[-1] in ":="
    )


def password_phrase_scan(line: str) -> Iterator[str]:
    """``Password in prose`` for each password word followed, within a few words and a separator (or
    right after a long password word), by a value that reads as a password. A line an assignment flags
    is that assignment's ("password: X" is one finding)."""
    if any(assignment_scan(line)):
        return
    for match in _PASSWORD_WORD.finditer(line):
        words = line[match.end() : match.end() + 200].split()[: _PHRASE_WORDS + 2]
        if not words:
            continue
        head = words[0]
        # "password:X", "pw=X": the separator glued to the value.
        if head[0] in ":=" and _phrase_value(head.lstrip(":=")):
            yield "Password in prose"
            return
        short = match.group(0).lower() in _SHORT_PASSWORD_WORDS
        if not short and _phrase_value(head):
            yield "Password in prose"
            return
        for index, word in enumerate(words[:-1]):
            if _separates(word, short) and _phrase_value(words[index + 1]):
                yield "Password in prose"
                return
            if word[-1] in ".;!?":
                break  # the sentence ended


def auth_header_scan(line: str) -> Iterator[str]:
    """``Authorization header`` for each Bearer/Basic/token credential that looks random."""
    for match in _AUTH_HEADER.finditer(line):
        if looks_like_token(match.group("value")):
            yield "Authorization header"


# A bare AWS secret access key: 40 characters of base64's alphabet standing alone (a longer run is a blob,
# decoded and scanned by the caller), with upper and lower case and digits and random-looking.
_BARE_CLOUD_KEY = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


# Detectors of a value with no prefix of its own: gluing a word onto a neighbouring token can make one.
BARE = frozenset({"AWS secret access key", "Azure storage key", "Azure client secret"})
# Detectors that know a secret by where it stands (a header, an assignment, a sentence, a command), not
# by its own shape: when a token's own detector flags it too, its name says more ("GitHub Token").
CONTEXT = frozenset(
    {
        "Authorization header",
        "Secret assignment",
        "Password in prose",
        "Password on a command line",
        "User and password",
    }
)


def bare_cloud_key_scan(line: str) -> Iterator[str]:
    """``AWS secret access key`` for each random-looking 40-character base64 run standing alone."""
    for match in _BARE_CLOUD_KEY.finditer(line):
        value = match.group(0)
        if (
            re.search(r"[a-z]", value)
            and re.search(r"[A-Z]", value)
            and re.search(r"[0-9]", value)
            and entropy(value) >= 4.2
        ):
            yield "AWS secret access key"


# A password given on a database or ssh command line: mysql -pPASS (no space: with one, mysql prompts),
# mysqldump/mariadb alike, sshpass -p PASS. The value is literal there (a variable would be $VAR).
_COMMAND_PASSWORD = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p(?P<value>[^\s'\"`]{3,})"
    r"|\bsshpass\s+-p\s*(?P<sshpass>[^\s'\"`]{3,})"
    # curl -u/--user user:password (and wget, httpie alike): without ":password" curl prompts.
    r"|(?<!\S)(?:-u|--user)[\s=]+['\"]?[^\s:'\"]*:(?P<user>[^\s'\"`]{6,})"
)


def command_password_scan(line: str) -> Iterator[str]:
    """``Password on a command line`` for each literal ``mysql -pPASS``/``sshpass -p PASS``."""
    for match in _COMMAND_PASSWORD.finditer(line):
        if match.group("user") is not None:
            if looks_like_password(match.group("user")):
                yield "Password on a command line"
            continue
        value = (match.group("value") or match.group("sshpass")).rstrip(";,.)&|")
        if len(value) >= 3 and not value.startswith("$") and not is_placeholder(value):
            yield "Password on a command line"


# user/password with no keyword ("log in as admin/Xk9#mP2q", "`root`/`S3cret!`"): a word, a slash and a
# password-like value, not part of a path, a URL or a file name. Only where a login is meant: both halves
# quoted alike, a well-known account name, or a login word just before.
# The login is a user name (lower case after its first letter: not a ticket id such as DEF-053); the
# password mixes cases and digits, or holds a symbol (not a version, a branch or a ticket).
_USER_PASSWORD = re.compile(
    r"""(?<![\w/.:@$%~-])(?P<q>[`'"]?)(?P<user>[A-Za-z][a-z0-9._-]{0,31})(?P=q)(?P<gap>[ \t]?)/(?P=gap)"""
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


def _strong_password(value: str) -> bool:
    """A password beside a user name: mixed cases and digits, or a symbol (not a version, a branch, a
    ticket, a file name or an e-mail's local part)."""
    if "." in value or not looks_like_password(value):
        return False
    mixed = bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value) and re.search(r"[0-9]", value))
    return mixed or bool(_PASSWORD_SYMBOL.search(value))


def user_password_scan(line: str) -> Iterator[str]:
    """``User and password`` for each ``user/password`` pair written where a login is meant."""
    for match in _USER_PASSWORD.finditer(line):
        value = match.group("value").rstrip(".,;:!?)]}")
        if not _strong_password(value):
            continue
        quoted = bool(match.group("q")) and match.group("q") == match.group("q2")
        if (
            quoted
            or match.group("user").lower() in _ACCOUNTS
            or _LOGIN_WORDS.search(line, max(0, match.start() - 40), match.start())
        ):
            yield "User and password"


# user:password@host with no scheme before it (an scp-style remote, a connection string pasted bare; with
# a scheme it is "Basic Auth Credentials"). URIs whose scheme takes no "//" are not logins.
_BARE_USERINFO = re.compile(
    r"(?<![\w/:@.%+-])(?P<user>[A-Za-z][\w.-]{0,31}):(?P<value>[^\s/@:]{6,128})@[A-Za-z0-9]"
)
_NOT_LOGINS = frozenset(("mailto", "sip", "sips", "tel", "xmpp", "im", "news", "urn"))


def bare_userinfo_scan(line: str) -> Iterator[str]:
    """``User and password`` for each ``user:password@host`` without a scheme whose password looks like
    one."""
    for match in _BARE_USERINFO.finditer(line):
        if match.group("user").lower() not in _NOT_LOGINS and _strong_password(match.group("value")):
            yield "User and password"
