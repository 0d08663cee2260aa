"""The playground's pages over HTTP, read as a browser without JavaScript reads them: every
form posts and redirects, and every page is whole HTML."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from starlette.testclient import TestClient

from tests.playground.conftest import csrf_of, playground_client, retrieval_round


@pytest.fixture(scope="module")
def client(service: Any) -> Iterator[TestClient]:
    yield playground_client(service)


def send(client: TestClient, message: str, session: str | None = None) -> str:
    """Post a message as the form does; the redirect's target (the chat, at the new round)."""
    form = {"message": message, "csrf": csrf_of(client)}
    if session:
        form["session"] = session
    response = client.post("/playground/support/say", data=form)
    assert response.status_code == 303, response.text
    return response.headers["location"]


def session_of(location: str) -> str:
    found = re.search(r"session=([\w-]+)", location)
    assert found is not None
    return found[1]


def test_one_served_pipeline_opens_its_chat(client: TestClient) -> None:
    response = client.get("/playground/")
    assert response.status_code == 303
    assert response.headers["location"] == "/playground/support/"


def test_a_message_redirects_to_its_round_and_the_answer_reads_without_javascript(
    client: TestClient,
) -> None:
    location = send(client, "My dishwasher shows E24 and the water stays at the bottom")
    assert location.endswith("#round-1")
    page = client.get(location.split("#")[0]).text
    assert 'id="round-1"' in page and "Updating" in page
    assert f'<code id="session-id">{session_of(location)}</code>' in page
    citation = re.search(r'class="cite" href="([^"]+)"', page)
    assert citation is not None
    source = client.get(citation[1].replace("&amp;", "&"))
    assert source.status_code == 200 and "<mark>" in source.text


def test_a_pending_question_turns_the_form_into_its_answer(client: TestClient) -> None:
    location = send(client, "What warranty do I get on my washing machine?")
    page = client.get(location.split("#")[0]).text
    assert "Your answer to:" in page and 'name="session"' in page
    answered = send(client, "It is a KW-720X", session_of(location))
    assert session_of(answered) == session_of(location) and answered.endswith("#round-2")


def test_the_why_page_is_the_task_tree_and_the_timeline(client: TestClient) -> None:
    session = session_of(send(client, "Compare the KD-450 and the KD-600X"))
    page = client.get(f"/playground/support/sessions/{session}/rounds/1").text
    assert 'id="task-1.3"' in page and "(the rule of coordinator compare_products)" in page
    assert 'class="reason reason-forced"' in page
    assert '<span class="purpose">decompose</span>' in page
    assert "<code>products.csv</code></span>" in page  # a table row has no page number


def test_the_why_page_counts_the_pages_a_retrieval_found_not_its_one_result(
    client: TestClient,
) -> None:
    session = session_of(send(client, "How do I descale my dishwasher?"))
    page = client.get(f"/playground/support/sessions/{session}/rounds/1").text
    assert "4 pages found" in page and "1 item" not in page
    assert "the offline provider&#39;s word check" in page


def test_an_empty_message_is_refused_on_the_chat_page_with_the_services_message(
    client: TestClient,
) -> None:
    response = client.post(
        "/playground/support/say", data={"message": "  ", "csrf": csrf_of(client)}
    )
    assert response.status_code == 400
    assert 'role="alert"' in response.text and "non-empty" in response.text


def test_an_unknown_pipeline_or_session_is_a_page_that_says_so(client: TestClient) -> None:
    missing = client.get("/playground/nope/")
    assert missing.status_code == 404 and "no pipeline &#39;nope&#39;" in missing.text
    gone = client.get("/playground/support/?session=000000000000")
    assert gone.status_code == 404 and "000000000000" in gone.text


def test_a_source_outside_the_corpora_is_not_read(client: TestClient) -> None:
    response = client.get(
        "/playground/support/source", params={"document": "../support.yaml", "page": 1}
    )
    assert response.status_code == 404
    assert "version: 1" not in response.text


def test_keep_shows_the_case_for_review_and_save_writes_and_runs_it(
    client: TestClient, support: Any
) -> None:
    session = session_of(send(client, "Is the KW-620 still under warranty? It is a KW-620"))
    preview = client.get(f"/playground/support/sessions/{session}/keep")
    assert preview.status_code == 200 and "Save the test" in preview.text
    assert not (support.parent / "tests" / "playground.yaml").exists()
    case = re.search(r'<textarea id="case-yaml"[^>]*>(.*?)</textarea>', preview.text, re.S)
    assert case is not None
    edited = html.unescape(case[1]).replace(
        "name: Is the KW-620 still under warranty? It is a KW-620", "name: a kept warranty case", 1
    )
    form = {"case": edited, "csrf": csrf_of(client)}
    posted = client.post(f"/playground/support/sessions/{session}/keep", data=form)
    assert posted.status_code == 303
    saved = client.get(posted.headers["location"])
    assert saved.status_code == 200 and 'id="test-result" class="pass"' in saved.text
    assert "name: a kept warranty case" in html.unescape(saved.text)
    written = (support.parent / "tests" / "playground.yaml").read_text(encoding="utf-8")
    assert "name: a kept warranty case" in written


def test_the_health_page_shows_the_graph_source_for_readers_without_javascript(
    client: TestClient,
) -> None:
    page = client.get("/playground/support/health").text
    assert 'id="valid"' in page and '<pre class="mermaid"' in page and "flowchart" in page


def test_the_vendored_scripts_are_served_from_the_playground_itself(client: TestClient) -> None:
    page = client.get("/playground/support/health").text
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts and all(unquote(src).startswith("/playground/static/") for src in scripts)
    for src in scripts:
        assert client.get(src).status_code == 200


def test_the_why_page_lists_a_retrieval_tools_ranked_pages_with_links() -> None:
    from runner.playground.pages import render
    from runner.playground.why import round_view

    result, trace = retrieval_round(
        [
            {"rank": 1, "document": "a.md", "page": 3, "heading": "Salt", "score": 0.9},
            {"rank": 2, "document": "a.md", "page": 4, "heading": "Next", "score": None},
        ],
        query="salt",
    )
    shown = {
        "number": 1,
        "message": "q",
        "result": result,
        "segments": [],
        "view": round_view(result, trace),
    }
    page = render("why.html", domain="support", session="s1", round=shown)
    assert "The pages rag found in docs for “salt”, best first" in page
    assert "document=a.md&amp;page=3" in page and "0.900" in page and "—" in page


def test_a_kept_case_that_is_not_in_the_file_is_not_found(client: TestClient) -> None:
    session = session_of(send(client, "Compare the KD-450 and the KD-600X"))
    response = client.get(f"/playground/support/sessions/{session}/kept", params={"name": "nope"})
    assert response.status_code == 404 and "no case named &#39;nope&#39;" in response.text


def test_several_served_pipelines_are_listed_with_their_descriptions() -> None:
    from runner.playground.pages import render

    listed = [
        {"domain": "support", "description": "Kestrel support.", "tools": [{}, {}]},
        {"domain": "hr", "description": "HR policies.", "tools": [{}]},
    ]
    page = render("index.html", pipelines=listed, domain=None)
    assert '<a href="/playground/support/">' in page and '<a href="/playground/hr/">' in page
    assert "HR policies." in page and "(1 tools)" not in page


def test_a_form_posted_from_another_site_is_refused_and_runs_nothing(
    client: TestClient, service: Any
) -> None:
    before = len(service.stores["support"].sessions())
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        form = {"message": "Hi", "csrf": csrf_of(client)}
        response = client.post("/playground/support/say", data=form, headers=headers)
        assert response.status_code == 403 and "another site" in response.text
    assert len(service.stores["support"].sessions()) == before


def test_a_form_from_the_playground_itself_is_taken(client: TestClient) -> None:
    response = client.post(
        "/playground/support/say",
        data={"message": "Hello", "csrf": csrf_of(client)},
        headers={"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"},
    )
    assert response.status_code == 303


def test_issue_19_a_form_without_its_csrf_token_is_refused_and_runs_nothing(
    client: TestClient, service: Any
) -> None:
    before = len(service.stores["support"].sessions())
    for form in ({"message": "Hi"}, {"message": "Hi", "csrf": "0" * 32}):
        response = client.post("/playground/support/say", data=form)
        assert response.status_code == 403 and "CSRF token" in response.text
    assert len(service.stores["support"].sessions()) == before


def test_a_degraded_round_says_so_above_its_warnings() -> None:
    from runner.playground.pages import render
    from runner.playground.why import round_view

    result, trace = retrieval_round([])
    result.update(degraded=True, warnings=["tool lookup failed on task 1: table file not found"])
    shown = {
        "number": 1,
        "message": "q",
        "result": result,
        "segments": [],
        "view": round_view(result, trace),
    }
    page = render("why.html", domain="support", session="s1", round=shown)
    assert 'class="degraded" role="alert"' in page
    assert "Warning: tool lookup failed on task 1" in page


# --- issue 19: the playground with a login, its forms and its windows ---------------------------

TOKENS = ("token-a", "token-b")


def signed_in(service: Any, token: str) -> TestClient:
    client = playground_client(service, tokens=TOKENS)
    response = client.post("/playground/login", data={"token": token})
    assert response.status_code == 303, response.text
    return client


def test_m6_with_tokens_a_page_asks_for_a_login_first(service: Any) -> None:
    client = playground_client(service, tokens=TOKENS)
    response = client.get("/playground/support/")
    assert response.status_code == 303 and response.headers["location"] == "/playground/login"
    assert client.get("/playground/login").status_code == 200
    refused = client.post("/playground/login", data={"token": "guess"})
    assert refused.status_code == 401 and "not a token" in refused.text


def test_m6_the_login_sets_an_http_only_strict_cookie_and_opens_the_chat(service: Any) -> None:
    client = playground_client(service, tokens=TOKENS)
    response = client.post("/playground/login", data={"token": "token-a"})
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get("/playground/support/").status_code == 200


def test_m1_a_session_of_one_token_is_not_found_by_another_in_the_playground(
    service: Any,
) -> None:
    a, b = signed_in(service, "token-a"), signed_in(service, "token-b")
    session = session_of(send(a, "Is the KW-620 quiet?"))
    assert a.get("/playground/support/", params={"session": session}).status_code == 200
    for path in (f"/playground/support/sessions/{session}/rounds/1", "/playground/support/"):
        response = b.get(path, params={"session": session})
        assert response.status_code == 404 and "KW-620 quiet" not in response.text


def test_h1_a_kept_case_naming_a_file_is_refused_and_nothing_is_read_or_written(
    client: TestClient, support: Any
) -> None:
    session = session_of(send(client, "Is the KW-620 quiet?"))
    case = "- name: leak\n  llm: {script_file: /etc/passwd}\n  turns:\n    - message: hi\n"
    form = {"case": case, "csrf": csrf_of(client)}
    response = client.post(f"/playground/support/sessions/{session}/keep", data=form)
    assert response.status_code == 400 and "names no file" in response.text
    assert "root:" not in response.text
    written = support.parent / "tests" / "playground.yaml"
    assert not written.exists() or "leak" not in written.read_text(encoding="utf-8")


def test_m3_the_chat_shows_the_newest_rounds_and_links_the_earlier_ones(
    client: TestClient, service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    monkeypatch.setattr(service, "limits", replace(service.limits, rounds_shown=2))
    session = session_of(send(client, "Is the KW-620 quiet?"))
    for _ in range(2):
        send(client, "And the KD-450?", session)
    page = client.get("/playground/support/", params={"session": session}).text
    assert 'id="round-3"' in page and 'id="round-1"' not in page
    assert "Earlier rounds" in page
    earlier = client.get("/playground/support/", params={"session": session, "before": 2}).text
    assert 'id="round-1"' in earlier and 'id="round-3"' not in earlier


def test_l4_the_pages_carry_a_policy_that_runs_no_inline_script(client: TestClient) -> None:
    response = client.get("/playground/support/health")
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", response.text)


def test_m4_a_link_from_another_site_does_not_run_the_kept_tests(client: TestClient) -> None:
    response = client.get(
        "/playground/support/sessions/any/kept",
        params={"name": "x"},
        headers={"Sec-Fetch-Site": "cross-site"},
    )
    assert response.status_code == 403


def test_m6_a_cookie_of_a_token_no_longer_accepted_leads_back_to_the_login(
    service: Any,
) -> None:
    client = playground_client(service, tokens=TOKENS)
    client.cookies.set("runner_token", "rotated-away")
    response = client.get("/playground/support/")
    assert response.status_code == 303 and response.headers["location"] == "/playground/login"
    assert client.get("/playground/login").status_code == 200


def test_l3_no_page_shows_where_the_machine_keeps_the_pipeline(
    client: TestClient, support: Any
) -> None:
    session = session_of(send(client, "Is the KW-620 quiet?"))
    form = {"case": "- name: quiet\n  turns:\n    - message: Is the KW-620 quiet?\n"}
    form["csrf"] = csrf_of(client)
    kept = client.post(f"/playground/support/sessions/{session}/keep", data=form)
    pages = [
        client.get("/playground/support/health").text,
        client.get(kept.headers["location"]).text,
        client.get("/playground/support/", params={"session": "nope"}).text,
    ]
    for text in pages:
        assert str(support.parent) not in text
