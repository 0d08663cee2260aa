"""The playground in a real headless browser, on the support example (the offline provider):
what a domain author does with it, screen by screen. Each screen is photographed into docs/img/
for docs/playground.md."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.playground.conftest import SHOTS

_CITATION_MARK = re.compile(r"\s*\[\d+(?:[,;]\s*\d+)*\]")  # the answer's `[1]` links

MAX_HEIGHT = 2400  # px: a screenshot taller than this is cut


def wait(driver: Any, condition: Any, seconds: float = 30) -> Any:
    return WebDriverWait(driver, seconds).until(condition)


def shoot(driver: Any, name: str) -> Path:
    """A screenshot of the whole page, beyond the window (Chrome's DevTools protocol), for the
    docs (conftest.SHOTS)."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], MAX_HEIGHT)}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}},
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"playground-{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def new_session(driver: Any, playground: str) -> None:
    driver.get(playground + "support/")
    wait(driver, ec.element_to_be_clickable((By.ID, "send")))


def say(driver: Any, text: str, rounds_before: int) -> Any:
    """Type a message, send it, and wait for its round to appear."""
    box = driver.find_element(By.ID, "message")
    box.clear()
    box.send_keys(text)
    driver.find_element(By.ID, "send").click()
    return wait(driver, ec.presence_of_element_located((By.ID, f"round-{rounds_before + 1}")))


def session_id(driver: Any) -> str:
    return driver.find_element(By.ID, "session-id").text


def test_a_question_shows_the_answer_with_a_clickable_source(browser: Any, playground: str) -> None:
    new_session(browser, playground)
    round_1 = say(browser, "My dishwasher shows E24 and the water stays at the bottom", 0)
    assert "Updating" in round_1.find_element(By.CSS_SELECTOR, ".answer-text").text
    assert session_id(browser)
    shoot(browser, "chat")

    citation = round_1.find_element(By.CSS_SELECTOR, "a.cite")
    document, page = citation.get_attribute("title").split(" p. ")
    citation.click()
    wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "article.source-page")))
    header = browser.find_element(By.CSS_SELECTOR, "article.source-page header").text
    assert document in header and f"page {page}" in header
    marked = browser.find_elements(By.CSS_SELECTOR, ".page-text mark")
    assert marked and all(mark.text for mark in marked)
    shoot(browser, "source")
    # the page shows a quoted list on its lines, the answer on one, and the answer cites each
    # of two sentences the page marks as one run: compared word by word, the citations aside
    quoted = " ".join(marked[0].text.split())  # read before leaving the page
    answer = _CITATION_MARK.sub("", round_1_text(browser))
    assert quoted in " ".join(answer.split())

    browser.find_element(By.CSS_SELECTOR, "#round-1 a.why").click()
    tree = wait(browser, ec.presence_of_element_located((By.ID, "task-1"))).text
    assert "handbook_rag" in tree and "troubleshooter yes" in tree and "gatekeeper" in tree
    shoot(browser, "why-question")


def round_1_text(driver: Any) -> str:
    """The first round's answer, read back through the page's back link."""
    driver.find_element(By.LINK_TEXT, "← Back to the conversation").click()
    answer = wait(
        driver, ec.presence_of_element_located((By.CSS_SELECTOR, "#round-1 .answer-text"))
    )
    return answer.text


def test_a_warranty_question_is_clarified_and_answered_in_the_same_session(
    browser: Any, playground: str
) -> None:
    new_session(browser, playground)
    asked = say(browser, "What warranty do I get on my washing machine?", 0)
    assert "Which Kestrel model is it?" in asked.find_element(By.CSS_SELECTOR, ".question").text
    first_session = session_id(browser)
    label = browser.find_element(By.CSS_SELECTOR, "label[for=message]").text
    assert label.startswith("Your answer to:")
    shoot(browser, "clarification")

    # answered from the keyboard: type, Tab to the button, Enter
    browser.find_element(By.ID, "message").send_keys("It is a KW-720X", Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("id") == "send"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    answered = wait(browser, ec.presence_of_element_located((By.ID, "round-2")))
    assert "3-year" in answered.find_element(By.CSS_SELECTOR, ".answer-text").text
    assert session_id(browser) == first_session
    assert answered.find_element(By.CSS_SELECTOR, ".who").text == "Your answer"


def test_the_task_tree_shows_the_forced_lookups_and_the_skipped_conditionals(
    browser: Any, playground: str
) -> None:
    new_session(browser, playground)
    # sent with Ctrl+Enter from the message field
    browser.find_element(By.ID, "message").send_keys(
        "Compare the KD-450 and the KD-600X", Keys.CONTROL, Keys.ENTER
    )
    compared = wait(browser, ec.presence_of_element_located((By.ID, "round-1")))
    meta = compared.find_element(By.CSS_SELECTOR, ".meta").text
    assert meta.startswith("ran compare_products, product_lookup")
    compared.find_element(By.CSS_SELECTOR, "a.why").click()
    wait(browser, ec.presence_of_element_located((By.ID, "task-1.1")))
    for task_no in ("1.1", "1.2"):
        tool = browser.find_element(By.ID, f"task-{task_no}").find_element(By.CSS_SELECTOR, ".tool")
        assert "product_lookup" in tool.text and "forced" in tool.text
    for task_no in ("1.3", "1.4"):
        task = browser.find_element(By.ID, f"task-{task_no}")
        assert "skipped" in task.get_attribute("class")
        assert "already found something (skip_if_found) (the rule of coordinator" in task.text
    purposes = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, ".timeline .purpose")]
    assert purposes == ["decompose", "tool"]
    shoot(browser, "why")


def test_keep_as_test_writes_a_case_that_runner_test_passes(
    browser: Any, playground: str, support: Path
) -> None:
    new_session(browser, playground)
    say(browser, "What warranty do I get on my washing machine?", 0)
    say(browser, "It is a KW-720X", 1)
    browser.find_element(By.ID, "keep").click()
    editor = wait(browser, ec.presence_of_element_located((By.ID, "case-yaml")))
    preview = editor.get_attribute("value")
    assert "answer: It is a KW-720X" in preview and "outcome: clarification" in preview
    # the author renames the case on its first line, as they would in the editor
    first_line = preview.splitlines()[0]
    editor.send_keys(Keys.CONTROL, Keys.HOME)
    editor.send_keys(Keys.SHIFT, Keys.END)
    editor.send_keys(
        first_line.split("name:")[0] + "name: a warranty question without a model asks for it"
    )
    shoot(browser, "keep")

    browser.find_element(By.ID, "save").click()
    result = wait(browser, ec.presence_of_element_located((By.ID, "test-result")))
    assert result.text.startswith("PASS")
    kept = support.parent / "tests" / "playground.yaml"
    assert "a warranty question without a model asks for it" in kept.read_text(encoding="utf-8")
    shoot(browser, "kept")

    run = subprocess.run(
        [sys.executable, "-c", "from runner.cli import main; main()", "test", str(kept)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS  a warranty question without a model asks for it" in run.stdout


def test_pipeline_health_shows_the_validation_and_draws_the_graph(
    browser: Any, playground: str
) -> None:
    browser.get(playground + "support/health")
    assert "valid" in wait(browser, ec.presence_of_element_located((By.ID, "valid"))).text
    wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, "#graph svg")))
    shoot(browser, "health")


def test_a_pipeline_file_broken_while_served_shows_its_error_at_its_line(
    browser: Any, playground: str, support: Path
) -> None:
    text = support.read_text(encoding="utf-8")
    support.write_text(text.replace("    top_k: 4\n", "    top_k: four\n", 1), encoding="utf-8")
    try:
        browser.get(playground + "support/health")
        finding = wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, ".finding.error")))
        assert "support.yaml:" in finding.text and "top_k: four" in finding.text
        shoot(browser, "health-error")
    finally:
        support.write_text(text, encoding="utf-8")


def test_a_refused_message_shows_the_services_reason_and_keeps_the_text(
    browser: Any, playground: str
) -> None:
    new_session(browser, playground)
    box = browser.find_element(By.ID, "message")
    browser.execute_script("arguments[0].value = 'x'.repeat(9000)", box)
    browser.find_element(By.ID, "send").click()
    error = wait(browser, ec.presence_of_element_located((By.ID, "error")))
    assert "more than this service's limit" in error.text
    assert len(browser.find_element(By.ID, "message").get_attribute("value")) == 9000


def test_no_page_raised_a_javascript_error(browser: Any, playground: str) -> None:
    """Every page the tests above opened, htmx's swaps and mermaid's drawing included (the
    refused message's 400 is the one failed request they make on purpose)."""
    refused = "/say - Failed to load resource: the server responded with a status of 400"
    errors = [
        entry["message"]
        for entry in browser.get_log("browser")
        if entry["level"] == "SEVERE" and refused not in entry["message"]
    ]
    assert errors == []


def test_every_field_of_every_page_has_a_label(browser: Any, playground: str) -> None:
    new_session(browser, playground)
    say(browser, "What warranty do I get on my washing machine?", 0)
    browser.find_element(By.ID, "keep").click()
    wait(browser, ec.presence_of_element_located((By.ID, "case-yaml")))
    for path in (browser.current_url, playground + "support/"):
        browser.get(path)
        unlabelled = browser.execute_script(
            "return [...document.querySelectorAll('input:not([type=hidden]), textarea, select')]"
            ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))"
            ".map(e => e.id || e.name)"
        )
        assert unlabelled == [], path
        assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
