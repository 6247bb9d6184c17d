"""The secret scanner: what it flags, what it leaves alone, the real corpus, and its speed."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import Entry
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.secrets import Finding, scan_text
from memsync.secrets.files import IN_NAME, NOT_UTF8, scan_appended, scan_name, scan_whole
from tests.support.helpers import CORPUS_CREDENTIAL

# Made-up credentials in the real shapes (none of them is live).
SECRETS = {
    "sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1nOp3rSt5vWx": "OpenAI-style API key",
    "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD": "OpenAI-style API key",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP": "GitHub fine-grained token",
    "use ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 for CI": "GitHub Token",
    "glpat-xYz12AbC34dEf56GhI78jK": "GitLab Token",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx": "Slack Token",
    "xoxp-1234567890-abcdefghijk": "Slack Token",
    "key id AKIAIOSFODNN7EXAMPLE": "AWS Access Key",
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"': "AWS Access Key",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U": "JSON Web Token",
    "-----BEGIN OPENSSH PRIVATE KEY-----": "Private Key",
    "-----BEGIN EC PRIVATE KEY-----": "Private Key",
    'password = "hunter2!"': "Secret assignment",
    "the db password: Tr0ub4dor&3": "Secret assignment",
    "KC_BOOTSTRAP_ADMIN_PASSWORD=S3cr3tP4ss": "Secret assignment",
    "dbPassword=CorrectHorse!": "Secret assignment",
    '"client_secret": "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L"': "Secret assignment",
    "api_key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0": "Secret assignment",
    "postgres://admin:s3cr3tpw@db.example.com:5432/app": "Basic Auth Credentials",
    "Authorization: Bearer 8f3kLm29xQpZ7vTn4RbWc1YhJ6sD0eGa": "Authorization header",
    "AIzaSyA-1234567890abcdefghijklmnopqrstu": "Google API key",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH": "Hugging Face token",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc": "Stripe Access Key",
    "password=correcthorsebatterystaple": "Secret assignment",
    "The DB password is hunter2": "Password in prose",
    "the staging passphrase was Tr0ub4dor&3.": "Password in prose",
    "the secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "AWS secret access key",
    "restore: mysql -h db -u app -pPASS appdb": "Password on a command line",
    "mysqldump --single-transaction -uroot -pS3cret! shop": "Password on a command line",
    "sshpass -p Zq9xLm2Pw ssh ops@bastion": "Password on a command line",
    "staging pw=Tr0ub4dor3x": "Secret assignment",
    "userPw: Hunter2x99": "Secret assignment",
    "log in to grafana as admin/Gr4f@naPass!": "User and password",
    "test users `secretary-test`/`Sec#Acmp2026`": "User and password",
    "creds: deploy/Dpl0yBot2026": "User and password",
    "client secret abc8Q~aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456": "Azure client secret",
    "dop_v1_" + "a1" * 32: "DigitalOcean token",
    # crypt(3) hashes, made with `openssl passwd` and `mkpasswd` of made-up words, as /etc/shadow,
    # htpasswd and user tables hold them.
    "root:$6$nEgQtUtB7uEdE0nd$NQTjvfEImXkPo2wqfuMJJTrG6aD.hksRA2DddO35MOkG3ENMxe3uUBOw8YzdYCgeWdv0P1DXQQvBtpl"
    "BFpK1k1:19700:0:99999:7:::": "Password hash",
    "ada:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19500:0:99999:7:::": (
        "Password hash"
    ),
    "svc:$5$rounds=5000$wtzD0EHOJHYUU97t$yeOGGAXf9PDHEVOdU6vJ3HDMOerCBs55zxnd069VkV0": "Password hash",
    "old:$1$TyPbs7dv$Wwqre9sHdmh6Y5W8j3dYt0:18000::::::": "Password hash",
    "web:$apr1$6u7.Z.Jv$SnvwE8yY8tMT9oje86kxE/": "Password hash",
    "users.hash = '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW'": "Password hash",
    "stored $argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG": "Password hash",
}

# Things real memory says that must not be flagged.
HARMLESS = [
    "Set GITHUB_TOKEN in the CI env; the workflow reads secrets.GITHUB_TOKEN.",
    "export KC_BOOTSTRAP_ADMIN_PASSWORD=<password> for playwright",
    "KC fresh-boot admin pw = `<password>`.",
    "password: ${DB_PASSWORD}",
    'token = os.environ["GITHUB_TOKEN"]',
    "api_key = self.api_key",
    "session 3f2b8c1e-9d4a-4e6b-8a7c-2d1f0e9b8a7c started",
    "fixed in commit 7991f93c3b9a2d4e5f60718293a4b5c6d7e8f901 (#146 `7991f93`)",
    '{"id": "3f9a1c2b7d10", "kind": "lesson", "source": "session:2026-11-08-a"}',
    "password: required",
    "password: per-user, auto-generated at first boot",
    "bypass: AllowList2 for the probe",
    "SQL volume-password mismatch → unhealthy",
    "only operator live-sandbox + token rotation remain",
    "project item PVTI_lADOCJ3ylM4AoN-Xzgbq3Xc moved to Done",
    "postgres://admin:<password>@localhost:5432/app",
    "http://localhost:8088/path?x=1",
    "secret: see the vault",
    "AWS account 123456789012, zone Z0000000000EXAMPLE00, host 203.0.113.10",
    "The 300s access-token lifetime; pinned secret → 200 + access_token, wrong secret → 401.",
    "Read /run/secrets/kc_bootstrap_admin_password inside the container.",
    "The password is stored in the vault; the password was rotated yesterday.",
    "password = user_password",
    "password: AuthenticationRequired",
    "it found `DEF-053`/`DEF-054` last time; `FR-156`/`157`/`158` done",
    "`/audit` RequireRole (was admin/auditor/chairman); see src/main2.py and feature/ABC-123",
    "branch `testids/promote-20260731`, retrospectives/2026-07-14-framework-alignment-audit.md",
    'mysql -u root -p appdb (it prompts); mysql -p$MYSQL_PWD; mysql -p"$PW"',
    "KC fresh-boot admin pw = `<password>`; pw: required",
    "the admin/admin default is disabled; login as guest/guest works",
    "fixed in 7991f93c3b9a2d4e5f60718293a4b5c6d7e8f901, then 0123456789abcdef0123456789abcdef01234567",
    "first line",
    "",
    "the plan costs $5 per seat, $6 with support; $2b$ was the old bcrypt prefix",
    "echo \"$1$2$3\"; awk '{print $1$5$6}'",
    "daemon:*:19000:0:99999:7:::",
    "bob:!:19000:0:99999:7:::",
]


@pytest.mark.parametrize(("text", "detector"), SECRETS.items())
def test_credentials_are_found(text: str, detector: str) -> None:
    findings = scan_text(f"first line\n{text}\nlast line")
    assert Finding(2, detector) in findings
    assert {f.line for f in findings} == {2}


@pytest.mark.parametrize("text", HARMLESS)
def test_ordinary_memory_text_is_not_flagged(text: str) -> None:
    assert scan_text(text) == []


def test_line_numbers_count_newlines_only() -> None:
    text = "a\rb\nplain\npassword = Hunter22x"
    assert scan_text(text) == [Finding(3, "Secret assignment")]


def test_whole_corpus_has_one_finding_a_real_credential(corpus: Path) -> None:
    """Every corpus file, every line: the corpus README lists credentials as replaced by placeholders
    (`<password>`, example account ids, documentation IPs), and it names env-var names such as
    GITHUB_TOKEN, session UUIDs, git shas and node ids that must stay unflagged. Expected: the one
    credential it kept (test users' passwords as `user`/`password`), no false positive."""
    findings: list[tuple[str, int, str]] = []
    lines = 0
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="replace")
        lines += text.count("\n") + 1
        findings += [(str(path.relative_to(corpus)), f.line, f.detector) for f in scan_text(text)]
    print(f"secret scan of the corpus: {lines} lines, {len(findings)} findings: {findings}")
    assert lines > 9000
    assert findings == [CORPUS_CREDENTIAL]


def test_remembering_a_secret_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "m.jsonl")
    memory.remember(NewEntry("Harmless fact.", "fact"))
    before = memory.path.read_bytes()
    for text in ("Deploy with glpat-xYz12AbC34dEf56GhI78jK", "db password: Tr0ub4dor&3"):
        with pytest.raises(MemsyncError, match=r"holds a secret \((GitLab Token|Secret assignment)\)"):
            memory.remember(NewEntry(text, "fact"))
    with pytest.raises(MemsyncError, match="secret"):
        memory.remember(NewEntry("Harmless text.", "fact", tags=("AKIAIOSFODNN7EXAMPLE",)))
    with pytest.raises(MemsyncError, match="secret"):
        memory.remember(NewEntry("Two lines:\nthe admin password: Tr0ub4dor&3", "fact"))
    with pytest.raises(MemsyncError, match="secret"):
        memory.append(
            Entry(
                id="aaaaaaaaaaaa",
                kind="fact",
                text="Harmless.",
                created_at="2026-11-30T00:00:00Z",
                extra={"api_key": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
            )
        )
    assert memory.path.read_bytes() == before


def test_every_detect_secrets_plugin_has_gates() -> None:
    """A pattern plugin without gates (a newer detect-secrets) still runs, but on every line (~30 µs each)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    from memsync.secrets.gates import _PLUGIN_GATES, _SKIPPED_PLUGINS

    classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    plugins = {cls.__name__ for cls in classes if issubclass(cls, RegexBasedDetector)}
    assert plugins - _SKIPPED_PLUGINS == set(_PLUGIN_GATES)


GHP = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
DISGUISES = {
    "zero-width spaces": "gh\u200bp_aBcDeFgHiJkLm\u200dNoPqRsTuVwXyZ0123456789",
    "soft hyphens and a word joiner": "ghp_aBcDe\u00adFgHiJkLm\u2060NoPqRsTuVwXyZ0123456789",
    "combining marks": "ghp_aBcDe\u0336FgHiJkLmNoPqRsTuVwXyZ0123456789",
    "full-width forms": "".join(chr(ord(c) + 0xFEE0) for c in GHP),
    "NUL between the characters (UTF-16 read as bytes)": "\x00".join(GHP),
    "backslash-u escapes": "".join(f"\\u{ord(c):04x}" for c in GHP),
    "backslash-x escapes": "".join(f"\\x{ord(c):02x}" for c in GHP),
    "percent-encoding": "".join(f"%{ord(c):02X}" for c in GHP),
    "percent-encoding twice": "".join(f"%25{ord(c):02X}" for c in GHP),
    "HTML character references": "".join(f"&#{ord(c)};" for c in GHP),
    "base64": base64.b64encode(GHP.encode()).decode(),
    "URL-safe base64 without padding": base64.urlsafe_b64encode(b"token " + GHP.encode())
    .decode()
    .rstrip("="),
    "base64 of percent-encoding": base64.b64encode("".join(f"%{ord(c):02X}" for c in GHP).encode()).decode(),
}


@pytest.mark.parametrize("text", DISGUISES.values(), ids=DISGUISES.keys())
def test_a_disguised_token_is_read_as_the_token(text: str) -> None:
    findings = scan_text(f"before\nthe CI uses {text} today\nafter")
    assert Finding(2, "GitHub Token") in findings and {f.line for f in findings} == {2}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("the CI token is ghp_aBcDeFgHiJkLmNoPq", "RsTuVwXyZ0123456789 for now"),
        ("release token ghp_Wk3nB8vC1xZ5lA9s", "  Df2Gh4Jk6Lp0Qr7Tu3Yi for the bot"),
        ("the db password is hunt", "er2x9 (rotate it)"),
        ("the secret key is wJalrXUtnFEMI/K7MDE", "NG/bPxRfiCYEXAMPLEKEY"),
    ],
)
def test_a_token_split_over_two_lines_holds_both_and_nothing_else(first: str, second: str) -> None:
    flagged = {f.line for f in scan_text(f"clean\n{first}\n{second}\nclean too")}
    assert flagged == {2, 3}


def test_a_neighbour_of_a_secret_is_not_held_with_it() -> None:
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THs"
    )
    for text in (f"first line\n{jwt}\nlast line", f"see {GHP}\nrotation plan follows"):
        assert {f.line for f in scan_text(text)} == {1 if text.startswith("see") else 2}


def test_memory_lines_are_read_as_their_json_strings() -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in "AKIAQ3EGRTYXPL7NMB2D")
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx4Jd8mQpZ2vR7nL0sT5uW9yB"
        "\\n-----END RSA PRIVATE KEY-----"
    )
    lines = [
        b'{"id":"a","kind":"fact","text":"key %s"}\n' % escaped.encode(),
        b'{"id":"b","text":"db postgres:\\/\\/admin:s3cr3tpw9@db.example.com\\/app"}\n',
        b'{"id":"c","%s":1}\n' % GHP.encode(),
        b'{"id":"d","text":"harmless","text":"key AKIAZ7NMB2DQ3EGRTYXP"}\n',
        b'{"id":"e","text":"%s"}\n' % pem.encode(),
        b'{"id":"f","text":"clean","tags":["x"]}\n',
        b'{"id":"g","text":"caf\xe9"}\n',
    ]
    flagged = scan_appended("memory/m.jsonl", lines)
    assert flagged == {
        0: "AWS Access Key",
        1: "Basic Auth Credentials",
        2: "GitHub Token",
        3: "AWS Access Key",
        4: "Private Key",
        6: NOT_UTF8,
    }


def test_a_token_split_across_two_entries_holds_both() -> None:
    first = b'{"id":"s1","text":"the CI token is ghp_aBcDeFgHiJkLmNoPq"}\n'
    second = b'{"id":"s2","text":"RsTuVwXyZ0123456789 (the rest)"}\n'
    clean = b'{"id":"s3","text":"a clean lesson"}\n'
    assert set(scan_appended("memory/m.jsonl", [clean, first, second, clean])) == {1, 2}
    assert set(scan_appended("memory/m.jsonl", [second, clean], context=[first])) == {0}


def test_frontmatter_values_are_read_as_yaml_reads_them() -> None:
    yaml_escape = (
        b'---\nname: aws\ndescription: "key \\x41KIAR2DMBQ3EGRTYXPL7"\ntype: reference\n---\n\nbody\n'
    )
    folded = (
        b"---\nname: f\ndescription: >\n  token ghp_Hy6Tg5Rf4Ed3Ws2Qa\n  1Zx8Cv7Bn6Mk5Lp4Oi9Uj\n---\n\nb\n"
    )
    quoted_key = b"---\nname: api\napi_key: 'Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L'\n---\n\nbody\n"
    assert scan_whole(yaml_escape) == (3, "AWS Access Key")
    assert scan_whole(folded) is not None and scan_whole(quoted_key) == (3, "Secret assignment")
    assert scan_whole(b"---\nname: plain\ndescription: nothing here\ntype: user\n---\n\nbody\n") is None


def test_text_that_is_not_utf8_is_never_published() -> None:
    assert scan_whole("key AKIAQ3EGRTYXPL7NMB2D".encode("utf-16")) == (1, NOT_UTF8)
    assert scan_whole(b"line one\nline \xff two\n") == (2, NOT_UTF8)
    assert scan_appended("roles/qa/daily/2026-11-30.md", [b"ok\n", b"caf\xe9\n"]) == {1: NOT_UTF8}


@pytest.mark.parametrize(
    "rel",
    [
        f"roles/qa/{GHP}.md",
        "roles/qa/AKIAT4EGRQ3YXPL7NMB2/notes.md",
        "roles/qa/db_password=Hunter2x99.md",
        "memory/" + "".join(f"%{ord(c):02X}" for c in GHP) + ".jsonl",
        f"roles/{GHP}/MEMORY.md",
    ],
)
def test_a_name_holding_a_secret_is_flagged(rel: str) -> None:
    named = scan_name(rel)
    assert named is not None and named.endswith(IN_NAME)


@pytest.mark.parametrize(
    "rel",
    [
        "roles/qa/user_timezone.md",
        "roles/qa/daily/2026-11-30.md",
        "memory/acmp.jsonl",
        "claude/memory/MEMORY.md",
    ],
)
def test_ordinary_names_are_not_flagged(rel: str) -> None:
    assert scan_name(rel) is None
