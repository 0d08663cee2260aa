"""`runner eval` end to end on the hr example and its question set: the results folder, the
report, the formats CI reads, the gates, a baseline, --jobs, --resume and the judge."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

from click.testing import Result

from runner.eval.metrics import stable
from tests.eval.conftest import records, write

Cli = Callable[..., Result]
QUESTIONS = "eval/questions.yaml"


def run(cli: Cli, pipeline: Path, out: Path, *args: object) -> Result:
    return cli("eval", pipeline, pipeline.parent / QUESTIONS, "--out", out, "-q", *args)


def test_a_run_writes_its_records_summary_traces_and_report(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    result = run(cli, hr_module, tmp_path / "run")
    assert result.exit_code == 0, result.output
    found = records(tmp_path / "run")
    assert [r["id"] for r in found][:2] == ["leave-carry-over", "leave-notice"]
    assert len(found) == 12
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["format"] == "runner-eval/1"
    assert summary["metrics"]["questions"] == 12
    assert set(summary["by_tag"]) >= {"leave", "benefits", "expenses"}
    trace = tmp_path / "run" / found[0]["trace"]
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert any(event["event"] == "retrieval" for event in events)
    assert "hit@k" in result.stdout


def test_the_report_is_one_self_contained_file_with_inline_plots(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    run(cli, hr_module, tmp_path / "run")
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert html.count("<svg") == 3  # retrieval by tag, latency, tokens
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched
    assert 'href="traces/leave-carry-over.jsonl"' in html


def test_a_follow_up_answers_the_clarifying_question(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    run(cli, hr_module, tmp_path / "run")
    balance = next(r for r in records(tmp_path / "run") if r["id"] == "leave-balance")
    assert (balance["turns"], balance["outcome"], balance["checks_passed"]) == (2, "answer", True)


def test_questions_asked_four_at_a_time_give_the_same_records(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    run(cli, hr_module, tmp_path / "one")
    run(cli, hr_module, tmp_path / "four", "--jobs", 4)
    one = [stable(r) for r in records(tmp_path / "one")]
    four = [stable(r) for r in records(tmp_path / "four")]
    assert one == four


def test_a_baseline_names_the_questions_that_got_worse_and_why(
    cli: Cli, hr: Path, tmp_path: Path
) -> None:
    run(cli, hr, tmp_path / "before")
    (hr.parent / "corpus" / "expenses-and-travel-policy.md").unlink()  # the change: a page gone
    result = run(
        cli, hr, tmp_path / "after", "--baseline", tmp_path / "before", "--fail-on-regression"
    )
    assert result.exit_code == 1
    worse = result.stdout.split("  worse mileage:", 1)[1].split("  worse", 1)[0]
    assert "- the gold source is no longer retrieved (it was rank 1)" in worse
    assert "- a source lost: the answer no longer cites expenses-and-travel-policy.md" in worse
    assert "FAIL: 2 questions got worse than in the baseline" in result.stdout


def test_baseline_last_is_the_newest_finished_run_of_the_set(cli: Cli, hr: Path) -> None:
    questions = hr.parent / QUESTIONS
    assert cli("eval", hr, questions, "-q").exit_code == 0
    result = cli("eval", hr, questions, "-q", "--baseline", "last", "--format", "json")
    assert result.exit_code == 0, result.output
    comparison = json.loads(result.stdout)["comparison"]
    assert comparison["baseline"].startswith(str(hr.parent / ".runner" / "eval" / "questions-"))
    assert comparison["worse"] == comparison["better"] == []


def test_fail_under_exits_1_and_says_which_metric_fell_short(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    passing = run(cli, hr_module, tmp_path / "a", "--fail-under", "answered=100%")
    assert passing.exit_code == 0
    failing = run(cli, hr_module, tmp_path / "b", "--fail-under", "hit@1=0.95")
    assert failing.exit_code == 1
    assert re.search(r"FAIL: hit@1 is 0\.\d+, under 0\.95", failing.stdout)


def test_junit_has_a_case_per_question_and_fails_those_that_miss(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    result = run(cli, hr_module, tmp_path / "run", "--format", "junit")
    suite = ElementTree.fromstring(result.stdout.split("\n", 1)[1])
    cases = suite.findall("testcase")
    assert len(cases) == 12
    failed = {case.get("name") for case in cases if case.find("failure") is not None}
    assert "leave-notice" in failed  # its gold page is not retrieved
    assert "leave-carry-over" not in failed


def test_github_annotations_point_at_the_questions_lines(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    result = run(cli, hr_module, tmp_path / "run", "--format", "github")
    lines = result.stdout.splitlines()
    assert all(line.startswith("::") for line in lines)
    notice = next(line for line in lines if "leave-notice:" in line)
    assert notice.startswith("::warning file=") and ",line=11," in notice  # its `- id:` line


def test_markdown_is_a_table_for_a_pull_request_comment(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    result = run(cli, hr_module, tmp_path / "run", "--format", "markdown")
    assert "| metric | value |" in result.stdout
    assert "| hit@k |" in result.stdout


def test_resume_asks_only_the_questions_without_a_result(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "run"
    run(cli, hr_module, folder)
    kept = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    # an interruption: five questions done, the sixth cut mid-line, no summary
    write(folder / "questions.jsonl", "\n".join(kept) + '\n{"id": "leave-sick')
    (folder / "summary.json").unlink()
    result = run(cli, hr_module, folder, "--resume")
    assert result.exit_code == 0, result.output
    after = records(folder)
    assert len(after) == 12
    assert [r["session"] for r in after[:5]] == [json.loads(line)["session"] for line in kept]


def test_the_judge_grades_correctness_faithfulness_and_relevance(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    questions = write(
        tmp_path / "q.yaml",
        "- id: carry\n  question: can I take unused holiday into next year\n"
        "  reference: Up to five days carry over.\n",
    )
    script = write(
        tmp_path / "judge.yaml",
        "- {tool: eval_judge_correctness, reply: {score: 0.8, reason: Says five days.}}\n"
        "- {tool: eval_judge_faithfulness, reply: {score: 1, reason: All from the policy.}}\n"
        "- {tool: eval_judge_relevance, reply: {score: 0.5, reason: Half of it.}}\n",
    )
    result = cli(
        "eval",
        hr_module,
        questions,
        "--out",
        tmp_path / "run",
        "-q",
        "--judge",
        "scripted",
        "--judge-script",
        script,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["summary"]["metrics"]
    assert (metrics["correctness"], metrics["faithfulness"]) == (0.8, 1.0)
    assert metrics["judged_relevance"] == 0.5
    [record] = records(tmp_path / "run")
    assert record["judge"]["correctness"] == {"score": 0.8, "reason": "Says five days."}
    assert record["llm"]["by_purpose"].get("tool") is None  # the judge is not the pipeline's


def test_a_broken_question_set_is_reported_at_its_place(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    questions = write(tmp_path / "q.csv", "id,question,tgas\na,hello,x\n")
    result = cli("eval", hr_module, questions, "--out", tmp_path / "run")
    assert result.exit_code == 1
    assert "q.csv:1:13" in result.output
    assert "did you mean `tags`?" in result.output


def test_a_judge_grade_that_fails_leaves_the_others(
    cli: Cli, hr_module: Path, tmp_path: Path
) -> None:
    questions = write(
        tmp_path / "q.yaml", "- id: carry\n  question: can I take unused holiday into next year\n"
    )
    script = write(
        tmp_path / "judge.yaml",
        "- {tool: eval_judge_faithfulness, reply: {score: 1, reason: All from the policy.}}\n",
    )
    result = cli(
        "eval",
        hr_module,
        questions,
        "--out",
        tmp_path / "run",
        "-q",
        "--judge",
        "scripted",
        "--judge-script",
        script,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    [record] = records(tmp_path / "run")
    assert record["judge"]["faithfulness"]["score"] == 1
    assert "error" in record["judge"]["relevance"]
    metrics = json.loads(result.stdout)["summary"]["metrics"]
    assert (metrics["faithfulness"], metrics["judged_relevance"]) == (1.0, None)
