"""Secrets in disguise never leave the machine (DESIGN I6, "Hostile input"): 33 kinds and encodings of
made-up credentials (none is live) planted the way careless agents write them, in memory lines (JSON
escapes, a key used as a JSON key, duplicate keys, a key block in a JSON string, a token split across
two entries), daily logs (command lines, user/password, a token split over two lines, HTML and percent
encodings), curated entries (body, frontmatter values, UTF-16 text) and file and directory names, among
clean content. Synced by two real daemons over a bare remote, then by `memsync sync`: no blob, path or
commit message reachable on the remote holds any of them; every clean line and file reached the peer;
`memsync status` lists every held item with its file and line.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from memsync.base.fsio import append_once, atomic_write
from tests.support.helpers import commit_messages, reachable_paths, remote_blobs, wait_for
from tests.support.peers import DAY, MEMORY_FILE, Peer, entry_line, running

pytestmark = pytest.mark.slow

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
AWS_ID = "AKIAQ3EGRTYXPL7NMB2D"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAx4Jd8mQpZ2vR7nL0sT5uW9yB3cF6hK1oN4qS8tV2xA5zC7eG\n"
    "pL3mR9vT1wY6bN8cF2hJ5kQ0sU4xA7zD9eG1iK3mO5qS7uW9yB2dF4hJ6lN8pR0t\n"
    "-----END RSA PRIVATE KEY-----"
)


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _percent(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode())


def _raw_entry(fields: str) -> bytes:
    return b'{"id":"%s","kind":"fact",%s,"created_at":"2026-11-30T09:00:00Z"}\n' % (
        base64.b16encode(fields.encode()[:6]).lower(),
        fields.encode(),
    )


# kind -> (the memory-file line as written, the needles that must never reach the remote)
MEMORY_LINES: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "AWS key id as JSON \\u escapes": (
        _raw_entry(f'"text":"key {_escaped(AWS_ID)}"'),
        (AWS_ID, _escaped(AWS_ID)),
    ),
    "URL with credentials and \\/ escapes": (
        _raw_entry('"text":"replica at postgres:\\/\\/admin:s3cr3tpw9@db.internal.example.com\\/app"'),
        ("s3cr3tpw9",),
    ),
    "GitHub token as a JSON key": (_raw_entry(f'"text":"ok","{GITHUB}":1'), (GITHUB,)),
    "Slack token split by zero-width spaces": (
        entry_line("alerts via xox\u200bb-123456789012-1234567890123-AbCdEf\u200bGhIjKlMnOpQrStUvWx"),
        ("123456789012-1234567890123",),
    ),
    "OpenAI key in full-width forms": (
        entry_line("eval with " + _fullwidth("sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1nOp3rSt5vWx")),
        (_fullwidth("sk-proj-Ab3dEf5hIj7lMn9"),),
    ),
    "GitLab token percent-encoded": (
        entry_line("mirror token " + _percent("glpat-xYz12AbC34dEf56GhI78jK")),
        (_percent("glpat-xYz12AbC34dEf56GhI78jK"), "glpat-xYz12AbC34dEf56GhI78jK"),
    ),
    "fine-grained PAT in base64": (
        entry_line(
            "blob "
            + base64.b64encode(b"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD").decode()
        ),
        (base64.b64encode(b"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD").decode(),),
    ),
    "AWS key id behind a duplicate key": (
        _raw_entry('"text":"harmless","text":"key AKIAZ7NMB2DQ3EGRTYXP"'),
        ("AKIAZ7NMB2DQ3EGRTYXP",),
    ),
    "private key block in a JSON string": (
        entry_line("deploy key:\n" + PEM),
        ("MIIEowIBAAKCAQEAx4Jd8mQpZ2vR7nL0",),
    ),
    "bare AWS secret access key in tags": (
        entry_line("the deploy user", tags=["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]),
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",),
    ),
    "bcrypt hash of a user row": (
        entry_line("admin row: admin | $2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
        ("R9h/cIPz0gi.URNNX3kh2OPST9",),
    ),
    "token split across two entries": (
        entry_line("the CI token is ghp_Zq9xLm2PwKt4Rb7Vn")
        + entry_line("Y1cD3fG5hJ8sA0eU6iO2wQ4 (paste both halves)"),
        ("ghp_Zq9xLm2PwKt4Rb7Vn", "Y1cD3fG5hJ8sA0eU6iO2wQ4"),
    ),
}
DAILY_LINES: dict[str, tuple[str, tuple[str, ...]]] = {
    "mysql -pPASS": ("- [09:01] restored with mysql -h db -u app -pS3cretPw9 appdb\n", ("S3cretPw9",)),
    "pw=": ("- [09:02] staging pw=Tr0ub4dor3x for the probe\n", ("Tr0ub4dor3x",)),
    "user/password with no keyword": (
        "- [09:03] log in to grafana as admin/Gr4f@naPass!\n",
        ("Gr4f@naPass",),
    ),
    "quoted user/password pair": ("- [09:04] deploy bot `deploy-bot`/`Dpl0y#2026x`\n", ("Dpl0y#2026x",)),
    "sshpass -p": ("- [09:05] sshpass -p Zq9xLm2Pw ssh ops@bastion\n", ("Zq9xLm2Pw",)),
    "token split over two lines": (
        "- [09:06] release token ghp_Wk3nB8vC1xZ5lA9s\n  Df2Gh4Jk6Lp0Qr7Tu3Yi for the bot\n",
        ("ghp_Wk3nB8vC1xZ5lA9s", "Df2Gh4Jk6Lp0Qr7Tu3Yi"),
    ),
    "Stripe key as HTML character references": (
        "- [09:07] billing key " + "".join(f"&#{ord(c)};" for c in "sk_live_4eC39HqLyjWDarjtT1zdp7dc") + "\n",
        ("&#115;&#107;&#95;&#108;&#105;&#118;&#101;",),
    ),
    "JWT split by a zero-width joiner": (
        "- [09:08] cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9\u200d.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n",
        ("dozjgNryP4J3jVmNHl0w5N",),
    ),
    "AWS key id percent-encoded twice": (
        "- [09:09] see ?k=" + quote(quote("AKIAN7Q3EGRTYXPL2DMB", safe=""), safe="") + "\n",
        ("AKIAN7Q3EGRTYXPL2DMB", quote(quote("AKIAN7Q3EGRTYXPL2DMB", safe=""), safe="")),
    ),
    "an /etc/shadow line": (
        "- [09:11] root:$6$nEgQtUtB7uEdE0nd$NQTjvfEImXkPo2wqfuMJJTrG6aD.hksRA2DddO35MOkG3ENMxe3uUBOw8Yzd"
        "YCgeWdv0P1DXQQvBtplBFpK1k1:19700:0:99999:7:::\n",
        ("NQTjvfEImXkPo2wqfuMJJTrG6aD",),
    ),
    "Azure storage key, bare": (
        "- [09:10] storage " + base64.b64encode(bytes(range(1, 65))).decode() + "\n",
        (base64.b64encode(bytes(range(1, 65))).decode(),),
    ),
}
CURATED: dict[str, tuple[str, bytes, tuple[str, ...]]] = {
    "Azure client secret in a body": (
        "azure_app",
        b"---\nname: azure app\ndescription: the app\ntype: reference\n---\n\n"
        b"client secret abc8Q~aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456\n",
        ("aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456",),
    ),
    "DigitalOcean token in a body": (
        "droplets",
        b"---\nname: droplets\ndescription: hosting\ntype: reference\n---\n\ntoken dop_v1_"
        + b"a1" * 32
        + b"\n",
        ("dop_v1_a1a1a1a1",),
    ),
    "AWS key id as a YAML \\x escape in frontmatter": (
        "aws_yaml",
        b'---\nname: aws\ndescription: "key \\x41KIAR2DMBQ3EGRTYXPL7"\ntype: reference\n---\n\nbody\n',
        ("KIAR2DMBQ3EGRTYXPL7",),
    ),
    "token in a folded frontmatter value": (
        "folded",
        b"---\nname: folded\ndescription: >\n  the token ghp_Hy6Tg5Rf4Ed3Ws2Qa\n"
        b"  1Zx8Cv7Bn6Mk5Lp4Oi9Uj here\ntype: reference\n---\n\nbody\n",
        ("ghp_Hy6Tg5Rf4Ed3Ws2Qa", "1Zx8Cv7Bn6Mk5Lp4Oi9Uj"),
    ),
    "API key as a quoted frontmatter key": (
        "api_meta",
        b"---\nname: api\ndescription: the api\ntype: reference\n"
        b"api_key: 'Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L'\n---\n\nb\n",
        ("Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L",),
    ),
    "UTF-16 text": (
        "utf16_notes",
        "---\nname: notes\ndescription: notes\ntype: project\n---\n\nkey AKIAW2DMBQ3EGRTYXPL7\n".encode(
            "utf-16"
        ),
        ("A\x00K\x00I\x00A\x00W\x002\x00",),
    ),
    "Google API key percent-encoded in a URL": (
        "maps",
        b"---\nname: maps\ndescription: maps\ntype: reference\n---\n\n"
        b"https://maps.example.com/api?key=%41%49za" + b"SyA-1234567890abcdefghijklmnopqrstu\n",
        ("SyA-1234567890abcdefghijklmnopqrstu",),
    ),
}
# Names: a curated entry named by a token, a directory named by a key, a file name holding a password.
NAMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "GitHub token as a curated entry's file name": (
        "ghp_Pq7Wr4Ty1Ui8Op5As2Df9Gh6Jk3Lz0Xc1Vb.md",
        ("ghp_Pq7Wr4Ty1Ui8Op5As2Df9Gh6Jk3Lz0Xc1Vb",),
    ),
    "AWS key id as a directory name": ("AKIAT4EGRQ3YXPL7NMB2/notes.md", ("AKIAT4EGRQ3YXPL7NMB2",)),
    "password assignment as a file name": ("db_password=Hunter2x99.md", ("Hunter2x99",)),
}
KINDS = len(MEMORY_LINES) + len(DAILY_LINES) + len(CURATED) + len(NAMES)
NEEDLES = [
    needle
    for table in (MEMORY_LINES, DAILY_LINES, NAMES)
    for _, needles in table.values()
    for needle in needles
] + [needle for _, _, needles in CURATED.values() for needle in needles]


def _leaks(repo: Path) -> list[str]:
    """The needles found in any blob, path or commit message reachable in ``repo``."""
    blobs = remote_blobs(repo)
    words = [*reachable_paths(repo), *commit_messages(repo)]
    found = []
    for needle in NEEDLES:
        raw = needle.encode("utf-8")
        if any(raw in blob for blob in blobs) or any(needle in word for word in words):
            found.append(needle)
    return found


def test_secrets_of_33_kinds_and_encodings_never_reach_the_remote(tmp_path: Path, remote: Path) -> None:
    assert KINDS >= 33
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    clean_memory = [alice.append_entry(f"clean lesson {i}: retry the flaky probe once") for i in range(3)]
    daily = alice.role_dir / "daily" / f"{DAY}.md"
    with running(alice, bob):
        for i, (line, _) in enumerate(MEMORY_LINES.values()):
            append_once(alice.memory_file, line)
            clean_memory.append(alice.append_entry(f"clean lesson after plant {i}"))
        text = f"# Daily log — {DAY}\n\n"
        clean_daily = [text]
        for i, (planted, _) in enumerate(DAILY_LINES.values()):
            clean = f"- [10:{i:02d}] ran the suite, all green\n"
            text += planted + clean
            clean_daily.append(clean)
        daily.parent.mkdir()
        append_once(daily, text.encode(), create=True)
        for slug, data, _ in CURATED.values():
            atomic_write(alice.role_dir / f"{slug}.md", data)
        for name, _ in NAMES.values():
            path = alice.role_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, b"---\nname: named\ndescription: a note\ntype: project\n---\n\nplain words\n")
        clean_entry = alice.write_curated("clean_entry", "Nothing secret here: use the staging host.\n")
        done = alice.append_entry("the last clean lesson")
        wait_for(lambda: done in bob.read_live(MEMORY_FILE), timeout=60, what="alice's last lesson at bob")
        wait_for(lambda: bob.read_live("clean_entry.md") == clean_entry, timeout=60, what="the clean entry")
    for peer in (alice, bob):
        result = peer.cli("sync")
        assert result.returncode == 0, result.stderr

    assert _leaks(remote) == [] and _leaks(alice.store) == [] and _leaks(bob.store) == []
    bob_memory, bob_daily = bob.read_live(MEMORY_FILE), bob.read_live(f"daily/{DAY}.md").decode()
    assert all(line in bob_memory for line in clean_memory)
    assert all(line in bob_daily for line in clean_daily)
    assert not any((bob.role_dir / f"{slug}.md").exists() for slug, _, _ in CURATED.values())
    assert not any((bob.role_dir / name.split("/")[0]).exists() for name, _ in NAMES.values())

    held = alice.status()["stores"]["main"]["held_back_secrets"]
    listed = {(Path(item["file"]), item["line"]) for item in held}
    memory_held = {line for path, line in listed if path == alice.memory_file}
    daily_held = {line for path, line in listed if path == daily}
    # Header, 3 clean entries, then each plant followed by a clean entry (the split one is two lines).
    assert len(memory_held) == len(MEMORY_LINES) + 1
    assert len(daily_held) == len(DAILY_LINES) + 1  # the split token holds both its lines
    for slug, _, _ in CURATED.values():
        assert any(path == alice.role_dir / f"{slug}.md" for path, _ in listed), slug
    for name, _ in NAMES.values():
        assert (alice.role_dir / name, 0) in listed, name
    print(
        f"secrets in disguise: {KINDS} kinds and encodings planted, {len(held)} items held back, "
        f"leaked 0 (every blob, path and commit message on the remote checked); "
        f"{len(clean_memory)} clean memory lines and {len(clean_daily)} clean daily lines reached the peer"
    )
    assert json.dumps(held)  # status is plain JSON
