"""The secret scanner: what it flags, what it leaves alone, the real corpus, and its speed."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.errors import MemsyncError
from memsync.formats.jsonl import Entry, MemoryFile
from memsync.secrets import Finding, scan_text

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
    "",
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


def test_whole_corpus_has_no_findings(corpus: Path) -> None:
    """Every corpus file, every line: the corpus README lists credentials as replaced by placeholders
    (`<password>`, example account ids, documentation IPs), and it names env-var names such as
    GITHUB_TOKEN, session UUIDs, git shas and node ids that must stay unflagged. Expected: 0 findings."""
    findings: list[tuple[str, int, str]] = []
    lines = 0
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="replace")
        lines += text.count("\n") + 1
        findings += [(str(path.relative_to(corpus)), f.line, f.detector) for f in scan_text(text)]
    print(f"secret scan of the corpus: {lines} lines, {len(findings)} findings: {findings}")
    assert lines > 9000
    assert findings == []


def test_remembering_a_secret_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "m.jsonl")
    memory.remember("Harmless fact.", "fact")
    before = memory.path.read_bytes()
    for text in ("Deploy with glpat-xYz12AbC34dEf56GhI78jK", "db password: Tr0ub4dor&3"):
        with pytest.raises(MemsyncError, match=r"holds a secret \((GitLab Token|Secret assignment)\)"):
            memory.remember(text, "fact")
    with pytest.raises(MemsyncError, match="secret"):
        memory.remember("Harmless text.", "fact", tags=["AKIAIOSFODNN7EXAMPLE"])
    with pytest.raises(MemsyncError, match="secret"):
        memory.remember("Two lines:\nthe admin password: Tr0ub4dor&3", "fact")
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

    from memsync.secrets import _PLUGIN_GATES, _SKIPPED_PLUGINS

    plugins = {
        cls.__name__
        for cls in get_mapping_from_secret_type_to_class().values()
        if issubclass(cls, RegexBasedDetector)
    }
    assert plugins - _SKIPPED_PLUGINS == set(_PLUGIN_GATES)
