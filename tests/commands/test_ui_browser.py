"""`memsync ui` in headless Chromium (Debian's chromium and chromium-driver, driven by Selenium): a person
browses, searches, opens an entry's timeline, forgets and undoes, resolves a conflict, marks a false
positive, approves and rejects proposals; each test checks the live files and the store afterwards.
Every page visited is saved as a screenshot at 1280x800 and 390x844 (in ``$MEMSYNC_ARTIFACTS`` if set,
else the test's tmp dir) and must not overflow horizontally at either size."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from tests.commands.test_ui import TEXT, proposal, server  # noqa: F401  (the fixtures, shared)
from tests.support.helpers import run_cli, wait_for
from tests.support.peers import Peer, entry_line
from tests.support.ui_client import ui_server

CHROMEDRIVER = Path("/usr/bin/chromedriver")
SIZES = ((1280, 800), (390, 844))
KEY_LINE = "The docs' example key is AKIAIOSFODNN7EXAMPLE, not a real one."

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMEDRIVER.exists() or shutil.which("chromium") is None,
        reason="chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)",
    ),
]

Shoot = Callable[[str], None]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium that fetches nothing but what the test opens."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    options = webdriver.ChromeOptions()
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium'}",
        "--window-size=1280,800",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def shoot(browser: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Shoot:
    """``shoot(name)``: the current page at each of :data:`SIZES`, saved as ``<test>-<name>-WxH.png``,
    with the check that nothing overflows horizontally."""
    where = Path(os.environ.get("MEMSYNC_ARTIFACTS") or tmp_path / "artifacts")
    where.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> None:
        for width, height in SIZES:
            browser.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            )
            wide = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            browser.save_screenshot(str(where / f"{request.node.name}-{name}-{width}x{height}.png"))
            assert wide[0] <= wide[1], f"{name} overflows at {width}x{height}: {wide}"
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    return take


def _ok(peer: Peer, *args: str) -> str:
    done = peer.cli(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _by(name: str) -> Any:
    from selenium.webdriver.common.by import By

    return getattr(By, name)


def test_a_person_searches_opens_a_timeline_forgets_and_undoes(
    tmp_path: Path, remote: Path, browser: Any, shoot: Shoot
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    mine = str(alice.memory_file)
    _ok(alice, "remember", "Builds run on the arm runner since March.", "--kind", "fact", "--file", mine)
    _ok(alice, "remember", "Never force-push to the release branch.", "--kind", "avoid", "--file", mine)
    _ok(alice, "sync")
    with ui_server(alice.env) as ui:
        browser.get(ui.url)
        assert "arm runner" in browser.find_element(_by("ID"), "entries").text
        shoot("memory")
        box = browser.find_element(_by("NAME"), "q")
        box.send_keys("runner")
        box.submit()
        wait_for(lambda: "id=hits" in browser.page_source or 'id="hits"' in browser.page_source)
        hits = browser.find_element(_by("ID"), "hits")
        assert "arm runner" in hits.text and "force-push" not in hits.text
        hits.find_element(_by("PARTIAL_LINK_TEXT"), "arm runner").click()
        wait_for(lambda: "Timeline" in browser.page_source, what="the entry page")
        timeline = browser.find_element(_by("ID"), "timeline").text
        assert "created" in timeline and "alice" in timeline
        shoot("entry")
        browser.find_element(_by("ID"), "forget").click()
        wait_for(lambda: "forgot" in browser.page_source, what="the forget noted")
        assert "arm runner" not in _ok(alice, "show", mine)
        browser.find_element(_by("ID"), "undo").click()
        wait_for(lambda: "undid forget" in browser.page_source, what="the undo noted")
        assert "Builds run on the arm runner since March." in _ok(alice, "show", mine)
    _ok(alice, "sync")
    shown = alice.store_git("show", "HEAD:memory/memory.jsonl")
    assert '"deleted":true' in shown and shown.count("Builds run on the arm runner since March.") == 2


def test_a_person_resolves_a_conflict_and_marks_a_false_positive(
    tmp_path: Path, remote: Path, browser: Any, shoot: Shoot
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    head = "---\nname: deploys\ndescription: how we deploy\ntype: project\n---\n"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Tuesdays.\n")
    _ok(alice, "sync")
    _ok(bob, "sync")
    entry = bob.role_dir / "deploys.md"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Wednesdays, after the standup.\n")
    entry.write_text(head + "Deploy on Thursdays, never on Fridays.\n")
    line = entry_line(KEY_LINE)
    with bob.memory_file.open("ab") as out:
        out.write(line)
    _ok(alice, "sync")
    bob.cli("sync")
    assert BOTH_KEPT_NOTE_PREFIX in entry.read_text()
    assert line not in bob.read_store("memory/memory.jsonl")

    with ui_server(bob.env) as ui:
        browser.get(ui.url)
        browser.find_element(_by("LINK_TEXT"), "Conflicts").click()
        wait_for(lambda: "Wednesdays" in browser.page_source, what="the conflicts page")
        shoot("conflicts")
        sides = browser.find_elements(_by("CLASS_NAME"), "side")
        alices = next(side for side in sides if "alice" in side.find_element(_by("TAG_NAME"), "h3").text)
        alices.find_element(_by("TAG_NAME"), "button").click()
        wait_for(lambda: "No file holds two kept versions" in browser.page_source, what="the resolution")
        assert entry.read_text() == head + "Deploy on Wednesdays, after the standup.\n"

        browser.find_element(_by("LINK_TEXT"), "Held back").click()
        wait_for(lambda: "AKIAIOSFODNN7EXAMPLE" in browser.page_source, what="the held line")
        shoot("held")
        browser.find_element(_by("CSS_SELECTOR"), "#held button").click()
        wait_for(lambda: "allowed" in browser.page_source, what="the allowance noted")
        browser.find_element(_by("LINK_TEXT"), "Machines").click()
        wait_for(lambda: "<svg" in browser.page_source, what="the machines chart")
        shoot("machines")
    _ok(bob, "sync")
    assert line in bob.read_store("memory/memory.jsonl")
    assert b"AKIA" not in bob.read_store(".memsync/allowed.jsonl")
    _ok(alice, "sync")
    assert (alice.role_dir / "deploys.md").read_text() == head + "Deploy on Wednesdays, after the standup.\n"
    assert line in alice.memory_file.read_bytes()


def test_a_person_approves_and_rejects_proposals_in_the_browser(
    server: str,  # noqa: F811
    proposal: tuple[Path, str],  # noqa: F811
    browser: Any,
    shoot: Shoot,
) -> None:
    live, pid = proposal
    other = "The staging cluster is safe to wipe on Fridays."
    said = run_cli("remember", other, "--file", str(live), "--propose", "--source", "session:agent")
    assert said.returncode == 0, said.stderr
    rejected = said.stdout.split()[1]
    browser.get(server)
    assert "shared.jsonl" in browser.page_source
    browser.find_element(_by("LINK_TEXT"), "Review").click()
    wait_for(lambda: TEXT in browser.page_source, what="the proposal on the Review page")
    shoot("review")
    browser.find_element(_by("ID"), f"approve-{pid}").click()
    wait_for(lambda: "approved by" in browser.page_source, timeout=60, what="the approval shown")
    written = json.loads(live.read_text().splitlines()[-1])
    assert written["text"] == TEXT
    browser.find_element(_by("ID"), "undo").click()  # the approval taken back: the proposal waits again
    wait_for(lambda: "undid approve" in browser.page_source, timeout=60, what="the undo shown")
    tombstone = json.loads(live.read_text().splitlines()[-1])
    assert tombstone["id"] == written["id"] and tombstone["deleted"] is True
    assert f"{pid}  team:" in run_cli("review").stdout
    browser.find_element(_by("ID"), f"approve-{pid}").click()
    wait_for(lambda: "approved by" in browser.page_source, timeout=60, what="the approval shown again")
    row = browser.find_element(_by("ID"), f"p-{rejected}")
    row.find_element(_by("NAME"), "why").send_keys("wiping staging needs a ticket")
    browser.find_element(_by("ID"), f"reject-{rejected}").click()
    wait_for(lambda: "rejected by" in browser.page_source, timeout=60, what="the rejection shown")
    assert TEXT in live.read_text() and other not in live.read_text()
    shown = run_cli("review", "--all").stdout
    assert f"{pid}  approved by" in shown
    assert f"{rejected}  rejected by" in shown and "wiping staging needs a ticket" in shown
