"""The Host names the service answers (runner.serve.hosts): IPv6 addresses in brackets, as
browsers write them (`[::1]:8000`), beside Starlette's names and wildcards; every other Host,
the malformed ones included, a 400. Then `runner serve --host ::1`, a real process on ::1."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from runner.cli import main
from runner.cli.serve import checked_hosts
from runner.serve.hosts import TrustedHosts, allowed_hosts, host_name_problem

from .server import ServeProcess


async def hello(_request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


def status(allowed: list[str], host: str) -> int:
    """The status of a request with this Host to an app answering `allowed`."""
    app = Starlette(
        routes=[Route("/", hello)], middleware=[Middleware(TrustedHosts, allowed_hosts=allowed)]
    )
    return TestClient(app).get("/", headers={"Host": host}).status_code


SERVED = ["localhost", "::1", "[fd00::2]", "*.example.com"]


@pytest.mark.parametrize(
    "host", ["[::1]", "[::1]:8000", "[fd00::2]", "[fd00::2]:443", "[0:0::1]:8000", "[FD00::2]"]
)
def test_an_allowed_ipv6_address_in_brackets_is_answered(host: str) -> None:
    assert status(SERVED, host) == 200


@pytest.mark.parametrize("allowed", ["fd00::2", "[fd00::2]"])
def test_an_ipv6_address_is_allowed_written_with_brackets_or_without(allowed: str) -> None:
    assert status([allowed], "[fd00::2]:8000") == 200


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "api.example.com"])
def test_names_and_wildcards_are_answered_as_starlette_answers_them(host: str) -> None:
    assert status(SERVED, host) == 200


@pytest.mark.parametrize(
    "host",
    [
        "[fd00::3]",  # another address
        "[::1]evil",
        "[::1]evil.example",
        "[::1]:8000@evil.example",
        "[::1]:80x",
        "[::1",
        "::1]",
        "::1",  # an IPv6 address outside brackets is no Host
        "[[::1]]",
        "[]",
        "[fe80::1%25eth0]",
        "[evil.example]",
        "[127.0.0.1]",
        "[localhost]",
        "",
        "evil.example",
        "localhost.evil.example",
        "example.com",
    ],
)
def test_every_other_host_is_refused(host: str) -> None:
    assert status(SERVED, host) == 400


def test_a_refused_host_gets_the_services_json_error() -> None:
    app = Starlette(
        routes=[Route("/", hello)], middleware=[Middleware(TrustedHosts, allowed_hosts=SERVED)]
    )
    refused = TestClient(app).get("/", headers={"Host": "evil.example"})
    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "invalid_request_error"
    assert "--allowed-host" in refused.json()["error"]["message"]


def test_without_an_ipv6_address_allowed_no_bracketed_host_is_answered() -> None:
    assert status(["localhost"], "[::1]:8000") == 400


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "an empty name"),
        ("[::1", "brackets hold an IPv6 address"),
        ("[::1]:8000", "brackets hold an IPv6 address"),
        ("[runner.example.com]", "brackets hold an IPv6 address"),
        ("runner.example.com:8000", "a name without its port"),
        ("runner.*.com", "a wildcard stands for whole leading labels"),
    ],
)
def test_an_allowed_host_no_host_could_match_is_told_why(name: str, problem: str) -> None:
    assert problem in str(host_name_problem(name))
    with pytest.raises(ValueError, match="cannot be answered"):
        status([name], "localhost")


def test_an_ipv6_bound_address_is_answered_in_brackets() -> None:
    assert "[fd00::2]" in allowed_hosts("fd00::2")


def test_serve_refuses_an_allowed_host_with_a_port_naming_the_option(shop: Path) -> None:
    result = CliRunner().invoke(
        main, ["serve", str(shop), "--allowed-host", "runner.example.com:8000"]
    )
    assert result.exit_code == 2
    assert "--allowed-host" in result.output and "a name without its port" in result.output


def test_serve_refuses_a_host_with_unclosed_brackets(shop: Path) -> None:
    result = CliRunner().invoke(main, ["serve", str(shop), "--host", "[::1"])
    assert result.exit_code == 2 and "write ::1 or [::1]" in result.output


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def test_serve_binds_an_ipv6_address_written_in_brackets_without_them() -> None:
    assert checked_hosts("[::1]", ()) == checked_hosts("::1", ()) == "::1"


@pytest.mark.skipif(not ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_serve_on_ipv6_loopback_answers_its_address_and_refuses_a_foreign_host(
    shop: Path,
) -> None:
    server = ServeProcess([shop], "--playground", host="::1").wait_ready()  # GET /healthz: 200
    try:
        assert httpx.get(f"{server.url}/v1/pipelines").status_code == 200
        page = httpx.get(f"{server.url}/playground/", follow_redirects=True)
        assert page.status_code == 200 and page.url.host == "::1"
        foreign = httpx.get(f"{server.url}/v1/pipelines", headers={"Host": "evil.example"})
        assert foreign.status_code == 400
    finally:
        server.stop()
