"""Issue 31, finding 18: the playground of a service with tokens, in a real headless Chromium.
Under the playground's `Referrer-Policy: no-referrer` the browser sends a plain form's POST with
`Origin: null`; the login and every form must work so, with JavaScript and without it, while a
form posted from a page of another origin is still refused (TestClient, which sends no Origin,
never showed either)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.playground.conftest import chromium, running_playground

TOKEN = "browser-token-31"


@pytest.fixture(scope="module")
def served(support: Path) -> Iterator[str]:
    with running_playground(support, RUNNER_SERVE_TOKENS=TOKEN) as url:
        yield url


def wait(driver: Any, condition: Any, seconds: float = 30) -> Any:
    return WebDriverWait(driver, seconds).until(condition)


def sign_in(driver: Any, served: str) -> None:
    driver.get(served + "support/")
    wait(driver, ec.presence_of_element_located((By.ID, "token"))).send_keys(TOKEN)
    driver.find_element(By.ID, "sign-in").click()
    wait(driver, ec.presence_of_element_located((By.ID, "send")))


def send(driver: Any, text: str) -> Any:
    driver.find_element(By.ID, "message").send_keys(text)
    driver.find_element(By.ID, "send").click()
    return wait(driver, ec.presence_of_element_located((By.ID, "round-1")))


@pytest.mark.parametrize("javascript", [True, False], ids=["script", "no-script"])
def test_f18_the_login_and_send_work_in_chromium_with_tokens(served: str, javascript: bool) -> None:
    with chromium(javascript=javascript) as driver:
        sign_in(driver, served)
        answer = send(driver, "My dishwasher shows E24").text
        assert "E24" in answer or "Updating" in answer


def test_f18_keeping_a_case_works_without_script(served: str) -> None:
    with chromium(javascript=False) as driver:
        sign_in(driver, served)
        send(driver, "My dishwasher shows E24")
        driver.find_element(By.ID, "keep").click()
        wait(driver, ec.element_to_be_clickable((By.ID, "save"))).click()
        wait(driver, lambda d: "/kept" in d.current_url)
        assert "403" not in driver.title and "refused" not in driver.page_source


class _Elsewhere(http.server.BaseHTTPRequestHandler):
    """Another origin's page (127.0.0.1 on another port: the same site, another origin), with
    the playground's own referrer policy, whose form posts a round to the playground."""

    target = ""

    def do_GET(self) -> None:
        body = (
            '<html><head><meta name="referrer" content="no-referrer"></head><body>'
            f'<form method="post" action="{self.target}support/say">'
            '<input name="message" value="sent from elsewhere"><input name="csrf" value="guess">'
            '<button id="go" type="submit">go</button></form></body></html>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


def test_f18_a_form_from_another_origin_is_still_refused(served: str) -> None:
    _Elsewhere.target = served
    elsewhere = http.server.HTTPServer(("127.0.0.1", 0), _Elsewhere)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    try:
        with chromium(javascript=False) as driver:
            sign_in(driver, served)  # the victim is signed in: the cookie is there
            driver.get(f"http://127.0.0.1:{elsewhere.server_address[1]}/")
            driver.find_element(By.ID, "go").click()
            wait(driver, lambda d: "support/say" in d.current_url)
            assert (
                "this form was not sent from a page of this playground" in (driver.page_source)
                or "refused a form sent from another site" in driver.page_source
            )
            driver.get(served + "support/")
            assert "sent from elsewhere" not in driver.page_source
    finally:
        elsewhere.shutdown()
