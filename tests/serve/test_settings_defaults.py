"""`runner serve`'s defaults are stated once (runner/serve/config.py, and the service core's in
runner/service/defaults.py): the command's options, the app and the service's `ServiceLimits` all
take them from there, so none can drift from the others."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from pathlib import Path

import click
import pytest

from runner.cli.serve import command
from runner.serve.app import create_app
from runner.serve.config import DEFAULTS, LISTENING, Listening, ServeSettings, minimum
from runner.service.pipelines import ServiceLimits

OPTIONS = {param.name: param for param in command.params if isinstance(param, click.Option)}
# option -> the setting it fills
TO_SETTINGS = {
    "host": "host",
    "max_body_bytes": "max_body_bytes",
    "max_message_chars": "max_message_chars",
    "lock_wait": "lock_wait_s",
    "drain_timeout": "drain_timeout_s",
    "max_rounds_in_flight": "max_rounds_in_flight",
    "max_rounds_per_client": "max_rounds_per_client",
    "body_timeout": "body_timeout_s",
}
TO_LISTENING = ("port", "workers", "max_connections", "log_level")

SERVE_MD = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
# a row of serve.md's option table, and the default its text states: "(default 1 MiB)"
ROW = re.compile(r"^\| `--(?P<option>[a-z-]+)[^`]*` \| (?P<text>.*) \|$", re.M)
STATED = re.compile(r"\(default `?(?P<value>[^`;)]+)`?[;)]")
UNITS = {" MiB": 1 << 20, " s": 1}


def stated_defaults() -> dict[str, str]:
    rows = ROW.finditer(SERVE_MD.read_text(encoding="utf-8"))
    found = {row["option"].replace("-", "_"): STATED.search(row["text"]) for row in rows}
    return {option: match["value"] for option, match in found.items() if match}


def value_of(text: str) -> object:
    """'1 MiB' -> 1048576, '8,000' -> 8000, '30 s' -> 30, '127.0.0.1' as it is."""
    for unit, factor in UNITS.items():
        if text.endswith(unit):
            return int(text[: -len(unit)].replace(",", "")) * factor
    number = text.replace(",", "")
    return int(number) if number.isdigit() else text


@pytest.mark.parametrize("option", sorted(TO_SETTINGS))
def test_each_app_option_defaults_to_its_setting(option: str) -> None:
    assert OPTIONS[option].default == getattr(DEFAULTS, TO_SETTINGS[option])


@pytest.mark.parametrize("option", TO_LISTENING)
def test_each_listening_option_defaults_to_its_setting(option: str) -> None:
    assert OPTIONS[option].default == getattr(LISTENING, option)


@pytest.mark.parametrize(
    ("option", "settings", "name"),
    [
        ("workers", Listening, "workers"),
        ("max_connections", Listening, "max_connections"),
        ("max_rounds_in_flight", ServeSettings, "max_rounds_in_flight"),
        ("max_rounds_per_client", ServeSettings, "max_rounds_per_client"),
    ],
)
def test_a_bounded_option_refuses_what_its_setting_does(
    option: str, settings: type[ServeSettings] | type[Listening], name: str
) -> None:
    kind = OPTIONS[option].type
    assert isinstance(kind, click.IntRange)
    assert kind.min == minimum(settings, name) == 1


def test_the_service_limits_default_to_serves_settings() -> None:
    limits = ServiceLimits()
    assert (
        limits.max_message_chars,
        limits.lock_wait_s,
        limits.max_rounds_in_flight,
        limits.max_rounds_per_client,
    ) == (
        DEFAULTS.max_message_chars,
        DEFAULTS.lock_wait_s,
        DEFAULTS.max_rounds_in_flight,
        DEFAULTS.max_rounds_per_client,
    )


@pytest.mark.parametrize("name", ["max_body_bytes", "drain_timeout_s", "body_timeout_s"])
def test_the_app_defaults_to_serves_settings(name: str) -> None:
    assert inspect.signature(create_app).parameters[name].default == getattr(DEFAULTS, name)


def test_the_settings_travel_to_the_workers_whole() -> None:
    settings = dataclasses.replace(DEFAULTS, paths=["a"], max_rounds_per_client=3)
    assert ServeSettings(**json.loads(settings.to_env())) == settings


def test_serve_md_states_the_defaults_the_options_have() -> None:
    stated = stated_defaults()
    assert len(stated) >= 8, f"serve.md's option table states fewer defaults: {stated}"
    for option, text in stated.items():
        assert value_of(text) == OPTIONS[option].default, f"docs/serve.md: --{option}"
