"""Domain-wide settings: the answer and gatekeeper templates, per-purpose template overrides,
the files and folders under `llm` and `state_dir`, regular expressions (R114) and a scripted
provider's rule file (R121)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_document, inside_folder
from runner.config.checks.templates import file_template, template_pair
from runner.config.humanize import humanize, suggestion_suffix
from runner.config.schema import definition_validator
from runner.documents.diagnostics import KeyPath, value_at
from runner.documents.loader import YamlFile
from runner.purposes import PURPOSE_VARIABLES, Purpose
from runner.text.patterns import compile_pattern, pattern_doubt


def domain_templates(checks: Checks) -> None:
    data = checks.data
    llm = data.get("llm", {})
    if "answer" in data:
        template_pair(checks, ("answer",), PURPOSE_VARIABLES[Purpose.ANSWER])
    if data.get("deep_fallback", {}).get("gatekeeper") is not None:
        template_pair(
            checks, ("deep_fallback", "gatekeeper"), PURPOSE_VARIABLES[Purpose.GATEKEEPER]
        )
    for purpose in llm.get("templates", {}):
        file_template(checks, ("llm", "templates", purpose), PURPOSE_VARIABLES[Purpose(purpose)])
    for key in ("cassette", "script_file"):
        if key in llm:
            inside_folder(checks, llm[key], ("llm", key))
    cache = llm.get("cache")
    if isinstance(cache, Mapping):
        inside_folder(checks, cache["path"], ("llm", "cache", "path"))
    if "state_dir" in data:
        inside_folder(checks, data["state_dir"], ("state_dir",))


def regexes(checks: Checks) -> None:
    places: list[KeyPath] = []
    for path, tool in checks.tool_items():
        if isinstance(tool.get("activation"), Mapping) and "pattern" in tool["activation"]:
            places.append((*path, "activation", "pattern"))
    for name, spec in checks.data.get("prompt_types", {}).get("types", {}).items():
        if isinstance(spec, Mapping) and "pattern" in spec:
            places.append(("prompt_types", "types", name, "pattern"))
    for index, rule in enumerate(checks.data.get("llm", {}).get("script", ())):
        places += [("llm", "script", index, key) for key in ("task", "prompt") if key in rule]
    for path in places:
        regex(checks, path)


def regex(checks: Checks, path: KeyPath, document: YamlFile | None = None) -> None:
    document = document or checks.document
    pattern = value_at(document.data, path)
    try:
        compile_pattern(pattern)
    except re.error as error:
        position = document.position(path)
        quoted = 1 if position.style in ("'", '"') else 0
        col = position.col + quoted + (error.pos or 0)
        checks.emit_at(
            "R114",
            f"the regular expression does not compile: {error.msg}",
            document.path,
            position.line,
            col,
            path,
            hint="in YAML, quote a pattern with single quotes so backslashes stay as written",
        )
        return
    doubt = pattern_doubt(pattern)
    if doubt is not None:
        checks.emit(
            "R127",
            f"the regular expression may mean something else in a later Python: {doubt}",
            path,
            hint="escape the character inside the set: `\\[`, `\\-`, `\\&`, `\\~` or `\\|`",
            warning=True,
        )


def script_file(checks: Checks) -> None:
    relative = checks.data.get("llm", {}).get("script_file")
    if relative is None:
        return
    document = existing_document(checks, relative, ("llm", "script_file"))
    if document is None:
        return
    if not isinstance(document.data, list | dict):
        checks.emit(
            "R121",
            "a script file must be a YAML list of rules, or a mapping with `rules:`",
            (),
            document=document,
            hint="- {purpose: answer, reply: ...}",
        )
        return
    validator = definition_validator("script_file")
    root = validator.schema if isinstance(validator.schema, Mapping) else None
    diagnostics = humanize(validator.iter_errors(document.data), document, root)
    checks.diagnostics.extend(diagnostics)
    if diagnostics:
        return
    rules = document.data if isinstance(document.data, list) else document.data["rules"]
    prefix: KeyPath = () if isinstance(document.data, list) else ("rules",)
    for index, rule in enumerate(rules):
        for key in ("task", "prompt"):
            if key in rule:
                regex(checks, (*prefix, index, key), document)
        if "tool" in rule and checks.simple_name(rule["tool"]) not in checks.tools:
            checks.emit(
                "R102",
                f"unknown tool `{rule['tool']}` in a scripted rule"
                + suggestion_suffix(checks.simple_name(rule["tool"]), checks.tools),
                (*prefix, index, "tool"),
                document=document,
            )
