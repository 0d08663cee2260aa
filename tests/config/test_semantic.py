"""Semantic checks the schema cannot make (codes R1xx)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.config import validate_file
from runner.documents import composing

from .helpers import BASE, FIXTURES, ROOT

LOOKUP = """\
  - name: product_lookup
    kind: lookup
    activation: coordinator_only
    table: products.csv
    key: model
"""
TABLE = {"products.csv": "model,price\nK1,29\n"}


def diagnostics(path: Path) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in validate_file(path).diagnostics]


def coordinator(required: str, extra: str = "") -> str:
    return (
        BASE
        + "    decompose:\n"
        + "      subtasks:\n"
        + f"        - prompt: 'Specs of {{{{ task }}}}'\n          required_tools: [{required}]\n"
        + extra
        + LOOKUP
    )


def test_c15_required_tools_accept_the_domain_prefixed_name(
    write_pipeline: Callable[..., Path],
) -> None:
    path = write_pipeline(coordinator("shop.product_lookup"), TABLE)
    assert diagnostics(path) == []


def test_c15_required_tools_accept_the_simple_name(write_pipeline: Callable[..., Path]) -> None:
    assert diagnostics(write_pipeline(coordinator("product_lookup"), TABLE)) == []


def test_c15_a_prefix_of_another_domain_is_unknown(write_pipeline: Callable[..., Path]) -> None:
    [(code, _), *_] = diagnostics(write_pipeline(coordinator("hr.product_lookup"), TABLE))
    assert code == "R102"


def test_a_python_tool_may_require_anything_so_no_r104(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE + LOOKUP + "  - name: planner\n    kind: python\n    class: plugins:Planner\n"
    assert diagnostics(write_pipeline(text, TABLE)) == []


def test_the_retrieval_tool_counts_as_required(write_pipeline: Callable[..., Path]) -> None:
    text = (
        "domain: shop\ncorpora: {docs: {path: docs}}\nretrieval_tool: rag\ntools:\n"
        "  - name: rag\n    kind: retrieve\n    corpus: docs\n    activation: coordinator_only\n"
    )
    assert diagnostics(write_pipeline(text, {"docs/a.md": "# A\n"})) == []


def test_validate_never_imports_a_python_tools_module() -> None:
    # The fixture's plugin module raises on import; validating in a fresh interpreter must
    # neither fail nor leave the module in sys.modules.
    script = (
        "import sys, pathlib; from runner.config import validate_file; "
        "report = validate_file(pathlib.Path(sys.argv[1])); "
        "assert report.pipeline is not None, report.diagnostics; "
        "assert not any(name.startswith('everything_plugins') for name in sys.modules)"
    )
    everything = FIXTURES / "valid" / "everything.yaml"
    subprocess.run([sys.executable, "-c", script, str(everything)], check=True, cwd=ROOT)


def test_subtask_templates_receive_their_loop_variable(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE + (
        "    decompose:\n      extract: {schema: {type: object}}\n      subtasks:\n"
        "        - for_each: params.products\n          as: product\n"
        "          id: '{{ index }}.{{ product }}'\n"
        "          prompt: 'Specs of {{ product }}'\n"
        "          conditional: {run_if: \"product and not found('1.1')\"}\n"
    )
    assert diagnostics(write_pipeline(text)) == []


def test_a_loop_variable_under_another_name_is_unknown(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE + (
        "    decompose:\n      subtasks:\n"
        "        - for_each: params.products\n          prompt: 'Specs of {{ product }}'\n"
    )
    [(code, message)] = diagnostics(write_pipeline(text))
    assert code == "R110"
    assert "`product`" in message


def test_clarify_question_receives_missing(write_pipeline: Callable[..., Path]) -> None:
    text = BASE + "    clarify: {question: 'Which {{ missing | join(\", \") }} for {{ tool }}?'}\n"
    assert diagnostics(write_pipeline(text)) == []


def test_purpose_template_overrides_are_checked_with_their_purposes_variables(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE.replace("tools:", "llm:\n  templates: {gatekeeper: g.j2, answer: a.j2}\ntools:")
    files = {"g.j2": "{{ question }} {{ passages }}\n", "a.j2": "{{ question }}\n{{ passages }}\n"}
    result = validate_file(write_pipeline(text, files)).diagnostics
    assert [(d.code, d.file.name, d.line, d.col) for d in result] == [("R110", "a.j2", 2, 4)]


def test_an_expression_cannot_smuggle_template_syntax(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE + (
        "    decompose:\n      relevant_if: 'params }}{{ task'\n      append_prompt: more\n"
    )
    [(code, _)] = diagnostics(write_pipeline(text))
    assert code == "R111"


def test_an_absolute_path_leaves_the_folder(write_pipeline: Callable[..., Path]) -> None:
    text = BASE.replace('    prompt: "Answer {{ task }}"\n', "    template: /etc/hostname\n")
    [(code, _)] = diagnostics(write_pipeline(text))
    assert code == "R108"


def test_a_regex_error_points_into_the_pattern(write_pipeline: Callable[..., Path]) -> None:
    path = write_pipeline(BASE + "    activation: {pattern: 'ab[c'}\n")
    [diagnostic] = validate_file(path).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("R114", 6, 30)  # the `[`


def test_script_file_rules_are_checked_in_their_own_file(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE.replace("tools:", "llm: {provider: scripted, script_file: rules.yaml}\ntools:")
    for content, line in (
        ("- purpose: answer\n  reply: ok\n- purpos: answer\n  reply: ok\n", 3),
        ("rules:\n  - purpose: answer\n    reply: ok\n  - purpos: answer\n    reply: ok\n", 4),
    ):
        files = {"rules.yaml": content}
        [diagnostic] = validate_file(write_pipeline(text, files)).diagnostics
        assert (diagnostic.code, diagnostic.file.name, diagnostic.line) == (
            "S101",
            "rules.yaml",
            line,
        )
        assert "did you mean `purpose`?" in diagnostic.message


def test_yaml_and_json_tables_have_their_columns_checked(
    write_pipeline: Callable[..., Path],
) -> None:
    for name, content in (
        ("t.yaml", "- {model: K1, price: 29}\n"),
        ("t.json", '[{"model": "K1", "price": 29}]'),
    ):
        text = BASE + f"  - name: prices\n    kind: lookup\n    table: {name}\n    key: modle\n"
        [(code, message)] = diagnostics(write_pipeline(text, {name: content}))
        assert code == "R120"
        assert message.endswith("did you mean `model`?")


def test_a_table_that_is_not_rows_is_an_error(write_pipeline: Callable[..., Path]) -> None:
    text = BASE + "  - name: prices\n    kind: lookup\n    table: t.yaml\n    key: model\n"
    [(code, message)] = diagnostics(write_pipeline(text, {"t.yaml": "model: K1\n"}))
    assert code == "R120"
    assert "list of rows" in message


def test_a_table_given_as_a_rows_mapping_is_read_as_a_run_reads_it(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE + "  - name: prices\n    kind: lookup\n    table: t.yaml\n    key: model\n"
    table = "rows:\n  - {model: K1, price: 3}\n"
    assert diagnostics(write_pipeline(text, {"t.yaml": table})) == []


def test_a_yaml_table_past_the_size_limit_is_refused_unread(
    write_pipeline: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(composing, "TABLE_LIMITS", composing.YamlLimits(max_bytes=100))
    text = BASE + "  - name: prices\n    kind: lookup\n    table: t.yaml\n    key: model\n"
    table = "".join(f"- {{model: K{i}}}\n" for i in range(20))
    [(code, message)] = diagnostics(write_pipeline(text, {"t.yaml": table}))
    assert code == "R120"
    assert "larger than 100 bytes" in message and "as CSV" in message


def test_deep_fallback_coordinator_must_be_a_deep_search_tool(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE.replace("tools:", "deep_fallback: {coordinator: shop.faq}\ntools:")
    [(code, message)] = diagnostics(write_pipeline(text))
    assert code == "R103"
    assert "`deep_search` or `python`" in message


def test_minimal_example_has_no_warning() -> None:
    assert validate_file(ROOT / "pipelines" / "minimal.yaml").diagnostics == ()


def test_a_pattern_python_warns_about_prints_nothing_when_it_is_compiled(
    recwarn: pytest.WarningsRecorder,
) -> None:
    from runner.text.patterns import compile_pattern

    assert compile_pattern("[[a]b").search("xab")
    assert not [w for w in recwarn if issubclass(w.category, FutureWarning)]
