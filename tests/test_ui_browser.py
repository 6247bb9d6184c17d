"""`memsync ui` in headless Chromium (Debian's chromium and chromium-driver, driven by Selenium): a person
opens the printed URL, goes to Review and approves a proposal; the live file and the store have it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import run_cli, wait_for
from tests.test_ui import TEXT, proposal, server  # noqa: F401  (the fixtures, shared)

CHROMEDRIVER = Path("/usr/bin/chromedriver")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMEDRIVER.exists() or shutil.which("chromium") is None,
        reason="chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)",
    ),
]


def test_a_person_approves_a_proposal_in_the_browser(
    server: str,  # noqa: F811
    proposal: tuple[Path, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.common.by import By

    live, pid = proposal
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
    browser = webdriver.Chrome(service=webdriver.ChromeService(str(CHROMEDRIVER)), options=options)
    try:
        browser.get(server)
        assert "shared.jsonl" in browser.page_source
        browser.find_element(By.LINK_TEXT, "Review").click()
        wait_for(lambda: TEXT in browser.page_source, what="the proposal on the Review page")
        browser.find_element(By.ID, f"approve-{pid}").click()
        wait_for(lambda: "approved by" in browser.page_source, timeout=60, what="the approval shown")
        browser.save_screenshot(str(tmp_path / "review-1280x800.png"))
    finally:
        browser.quit()
    assert TEXT in live.read_text()
    shown = run_cli("review", "--all")
    assert f"{pid}  approved by" in shown.stdout
