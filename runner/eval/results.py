"""A run's results on disk: a folder that a later run can resume, compare itself with, or
draw its report from.

    RUN/questions.jsonl   one record a line (runner.eval.metrics), in the set's order once the
                          run is finished; appended as each question finishes while it runs
    RUN/summary.json      {"format": "runner-eval/1", the pipeline, the question set, when,
                          the options, "metrics", "by_tag", "by_purpose"}
    RUN/traces/ID.jsonl   each question's trace (`runner run --trace`'s format)
    RUN/report.html       the report (runner.eval.report_html)

The format's version is the summary's `format`; a reader refuses a major version it does not
know rather than misread it. Runs go to `<pipeline folder>/.runner/eval/<set>-<UTC time>/`
unless `--out` names a folder.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

FORMAT = "runner-eval/1"
RECORDS = "questions.jsonl"
SUMMARY = "summary.json"
TRACES = "traces"
REPORT = "report.html"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class ResultsError(Exception):
    """A results folder that cannot be read (not a run, or a format this runner does not know)."""


@dataclass
class Run:
    folder: Path
    summary: dict[str, Any]
    records: list[dict[str, Any]]

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {str(record["id"]): record for record in self.records}


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_folder(state_folder: Path, questions: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return state_folder / "eval" / f"{_SAFE_NAME.sub('_', questions.stem)}-{stamp}"


def trace_name(question_id: str) -> str:
    return f"{TRACES}/{_SAFE_NAME.sub('_', question_id)}.jsonl"


class RunWriter:
    """Writes a run as it goes: a record a line, flushed, so an interrupted run loses at most
    the questions that were running (`--resume` asks only those again). What it writes passes
    the redactor first (no credential, the pipeline's folder named relative: runner.text.redact),
    so the report drawn from the records, the traces and the summary carry none either."""

    def __init__(self, folder: Path, *, resume: bool, pipeline: Path | None = None) -> None:
        from runner.text.redact import Redactor

        self.folder = folder
        self._redactor = Redactor([pipeline.resolve().parent] if pipeline is not None else [])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / TRACES).mkdir(exist_ok=True)
        self.done = read_records(folder / RECORDS) if resume else {}
        # a folder with a summary is a finished run: this one is not, until `finish`
        (folder / SUMMARY).unlink(missing_ok=True)
        # a resumed run rewrites what it kept, dropping a line cut by the interruption
        self._write_all(self.done.values())
        self._handle: IO[str] = (folder / RECORDS).open("a", encoding="utf-8")

    def add(self, record: Mapping[str, Any]) -> None:
        self._handle.write(json.dumps(self._redactor.json(dict(record)), ensure_ascii=False) + "\n")
        self._handle.flush()

    def write_trace(self, question_id: str, events: Iterable[Mapping[str, Any]]) -> str:
        name = trace_name(question_id)
        lines = "".join(
            json.dumps(self._redactor.json(dict(event)), ensure_ascii=False) + "\n"
            for event in events
        )
        (self.folder / name).write_text(lines, encoding="utf-8")
        return name

    def ordered(self, order: Sequence[str]) -> list[dict[str, Any]]:
        """The records in the set's order, the results file rewritten so (a local run and a Ray
        run, whose questions finish in different orders, write the same file)."""
        self._handle.close()
        records = read_records(self.folder / RECORDS)
        ordered = [records[key] for key in order if key in records]
        self._write_all(ordered)
        return ordered

    def finish(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        """The summary, written last: a folder with one is a finished run. Returns it as
        written (redacted), for the report."""
        shown: dict[str, Any] = self._redactor.json(dict(summary))
        write_json(self.folder / SUMMARY, {"format": FORMAT, **shown})
        return shown

    def close(self) -> None:
        self._handle.close()

    def _write_all(self, records: Iterable[Mapping[str, Any]]) -> None:
        temporary = self.folder / (RECORDS + ".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        os.replace(temporary, self.folder / RECORDS)


def write_json(path: Path, data: Any) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    """The records of a results file by id; a last line cut short by an interruption is
    dropped (its question is asked again)."""
    records: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return records
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "id" in record:
                records[str(record["id"])] = record
    return records


def read_run(path: Path) -> Run:
    """A finished run: its folder, or its summary.json. Raises ResultsError."""
    folder = path.parent if path.is_file() else path
    summary_path = folder / SUMMARY
    if not summary_path.is_file():
        raise ResultsError(
            f"{path} is not a finished `runner eval` run (no {SUMMARY} in {folder}); give the "
            "folder a run wrote (its path is printed at the end of the run)"
        )
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ResultsError(f"{summary_path} cannot be read: {error}") from error
    written = str(summary.get("format", ""))
    if written.split(".")[0] != FORMAT.split(".")[0]:
        raise ResultsError(
            f"{summary_path} is in format {written or 'unknown'!r}; this runner reads {FORMAT!r} "
            "(run the evaluation again with this runner to compare with it)"
        )
    return Run(folder, summary, list(read_records(folder / RECORDS).values()))


def latest_run(root: Path, questions: Path, *, before: Path | None = None) -> Path | None:
    """The newest finished run of this question set under `root` (for `--baseline last`)."""
    prefix = _SAFE_NAME.sub("_", questions.stem) + "-"
    runs = sorted(
        folder
        for folder in root.glob(prefix + "*")
        if (folder / SUMMARY).is_file() and folder != before
    )
    return runs[-1] if runs else None


def unfinished_run(root: Path, questions: Path) -> Path | None:
    """The newest run of this question set that was interrupted (for `--resume`)."""
    prefix = _SAFE_NAME.sub("_", questions.stem) + "-"
    runs = sorted(
        folder
        for folder in root.glob(prefix + "*")
        if (folder / RECORDS).is_file() and not (folder / SUMMARY).is_file()
    )
    return runs[-1] if runs else None
