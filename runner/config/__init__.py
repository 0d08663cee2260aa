"""Loading and validating pipeline files.

    load_pipeline(path) -> Pipeline        raises PipelineError with every diagnostic
    validate_file(path) -> ValidationReport      diagnostics (and the model when the file is valid)
    validate_paths(paths) -> [ValidationReport]  files and folders (folders are searched)
    check_files(files) -> [ValidationReport]     diagnostics only, many files on every CPU
    find_pipeline_files(paths) -> [Path]
    find_yaml_files(paths, accept) -> [Path]   the same folder search, for other YAML files
    yaml_files(folder) -> Iterator[Path]       every YAML file below a folder, hidden ones skipped

A file goes through four stages, each reporting with positions: YAML loading (Y0xx), the JSON
Schema (S1xx), the semantic checks (R1xx) and building the typed model. The semantic checks run
only on a file that passed the schema, because they rely on its shapes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from runner.config.model import Pipeline
from runner.documents.diagnostics import Diagnostic, PipelineError, Severity, sort_diagnostics

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

__all__ = [
    "Diagnostic",
    "PipelineError",
    "Severity",
    "ValidationReport",
    "check_files",
    "find_pipeline_files",
    "find_yaml_files",
    "load_pipeline",
    "validate_file",
    "validate_paths",
    "yaml_files",
]

_YAML_SUFFIXES = (".yaml", ".yml")
# From this many files on, `check_files` spreads them over one process per CPU (validation is
# CPU-bound; below this, starting the processes costs more than it saves).
PARALLEL_FROM = 64
_SKIPPED_FOLDERS = {"__pycache__", "node_modules"}
_MODELINE = re.compile(r"yaml-language-server:\s*\$schema=\S*pipeline\.schema\.json")
_TOP_LEVEL_KEY = re.compile(r"^(domain|tools)\s*:", re.MULTILINE)


@dataclass(frozen=True)
class ValidationReport:
    """A pipeline file's validation: its diagnostics, and the pipeline when valid."""

    path: Path
    diagnostics: tuple[Diagnostic, ...]
    pipeline: Pipeline | None = None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.is_error]

    def passed(self, strict: bool = False) -> bool:
        return not self.errors and not (strict and self.warnings)


def validate_file(path: Path) -> ValidationReport:
    """Every diagnostic of one pipeline file, and its model when it has no error. A failure of
    runner itself while checking the file is reported against the file (X001), never raised."""
    try:
        return _validate_file(path)
    except Exception as error:  # a bug: the file's own report says so, the other files go on
        return ValidationReport(path, (internal_error(path, error),))


def internal_error(path: Path, error: BaseException) -> Diagnostic:
    """X001: runner failed on this file; the message names the exception and where it rose."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return Diagnostic(
        "X001",
        f"internal error while checking this file: {type(error).__name__}: {error}{where}",
        path,
        hint="this is a bug in runner, not in the file: please report it with the file",
    )


def _validate_file(path: Path, named: dict[Path, bool] | None = None) -> ValidationReport:
    # Imported here: `runner validate` is the only caller that needs the whole machinery,
    # and the engine importing runner.config.model should not pay for jsonschema.
    from runner.config.build import build_pipeline
    from runner.config.checks import check
    from runner.config.humanize import humanize
    from runner.config.schema import schema_errors
    from runner.config.secrets import declared_secrets
    from runner.documents.loader import LoadError, read_document
    from runner.text.credentials import remember_secrets

    try:
        document = read_document(path)
    except LoadError as error:
        return ValidationReport(path, (error.diagnostic,))
    diagnostics = humanize(schema_errors(document.data), document)
    if diagnostics:
        return ValidationReport(path, tuple(sort_diagnostics(diagnostics)))
    ordered = tuple(sort_diagnostics(check(document, named)))
    if any(d.is_error for d in ordered):
        return ValidationReport(path, ordered)
    pipeline = build_pipeline(document)
    remember_secrets(declared_secrets(pipeline))  # hidden in whatever leaves runner from now on
    return ValidationReport(path, ordered, pipeline)


def check_files(files: Sequence[Path]) -> list[ValidationReport]:
    """Every file's diagnostics, in order; the reports carry no model. Many files are checked
    by one process per CPU, forked once the schema is compiled."""
    workers = _workers(len(files))
    if workers <= 1:
        return [_diagnostics_only(path) for path in files]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from contextlib import suppress

    from runner.config.schema import fast_check, pipeline_validator

    fast_check(), pipeline_validator()  # built once, before the fork, for every worker
    context = multiprocessing.get_context("fork")
    size = -(-len(files) // (workers * 4))
    chunks = [list(files[start : start + size]) for start in range(0, len(files), size)]
    reports: dict[Path, ValidationReport] = {}
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = [pool.submit(_check_chunk, chunk) for chunk in chunks]
        for future in futures:
            with suppress(BrokenProcessPool):  # a worker died (a crash in C, no memory): see below
                reports.update((report.path, report) for report in future.result())
    # The files of a chunk whose worker died are checked again, each in a process of its own,
    # so that the one that kills its process is the only one reported as such.
    return [reports.get(path) or _check_isolated(path, context) for path in files]


def _check_chunk(files: list[Path]) -> list[ValidationReport]:
    return [_diagnostics_only(path) for path in files]


def _check_isolated(path: Path, context: BaseContext) -> ValidationReport:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=context) as pool:
        try:
            return pool.submit(_diagnostics_only, path).result()
        except BrokenProcessPool:
            message = "internal error: the process checking this file died (a crash or no memory)"
            hint = "this is a bug in runner, not in the file: please report it with the file"
            return ValidationReport(path, (Diagnostic("X002", message, path, hint=hint),))


def _workers(files: int) -> int:
    import multiprocessing

    if files < PARALLEL_FROM or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def _diagnostics_only(path: Path) -> ValidationReport:
    # the model holds read-only mappings, which cannot cross a process boundary
    return replace(validate_file(path), pipeline=None)


def load_pipeline(path: Path | str) -> Pipeline:
    """The model of a valid pipeline file; raises PipelineError (warnings do not raise).

    A file that passed with no diagnostic, and whose named files and folders have not changed
    since, is not checked again (runner/config/validated.py: the record in its state folder);
    `validate_file` always checks."""
    path = Path(path)
    remembered = _remembered(path)
    if remembered is not None:
        return remembered
    named: dict[Path, bool] = {}
    try:
        report = _validate_file(path, named)
    except Exception as error:  # a bug: reported against the file, as validate_file does
        report = ValidationReport(path, (internal_error(path, error),))
    if report.pipeline is None:
        raise PipelineError(report.path, report.diagnostics)
    if not report.diagnostics:
        from runner.config.validated import remember

        remember(path, report.pipeline, named)
    return report.pipeline


def _remembered(path: Path) -> Pipeline | None:
    """The model built straight from the file when its record says it is valid as it is."""
    from runner.config.build import build_pipeline
    from runner.config.validated import still_valid
    from runner.documents.loader import LoadError, read_document

    try:
        document = read_document(path)
    except LoadError:
        return None  # validation reports it
    if not still_valid(path, document.text, document.data):
        return None
    return build_pipeline(document)


def validate_paths(paths: Iterable[Path | str]) -> list[ValidationReport]:
    return [validate_file(path) for path in find_pipeline_files(paths)]


def find_pipeline_files(paths: Iterable[Path | str]) -> list[Path]:
    """Files as given, and the pipeline files found in folders: YAML files whose top level has
    `domain` and `tools` (or that carry the pipeline schema's modeline). Test cases, data tables
    and other YAML are skipped; so are hidden folders such as `.runner`. Raises FileNotFoundError
    for a path that does not exist."""
    return find_yaml_files(paths, _looks_like_pipeline)


def find_yaml_files(paths: Iterable[Path | str], accept: Callable[[Path], bool]) -> list[Path]:
    """Files as given (whatever they hold), and the YAML files below folders that `accept`
    takes, each once, in order. Raises FileNotFoundError for a path that does not exist."""
    found: list[Path] = []
    for given in map(Path, paths):
        if not given.exists():
            raise FileNotFoundError(given)
        candidates = [given] if given.is_file() else yaml_files(given)
        for candidate in candidates:
            if (given.is_file() or accept(candidate)) and candidate not in found:
                found.append(candidate)
    return found


def yaml_files(folder: Path) -> Iterator[Path]:
    """Every `.yaml` / `.yml` file below a folder, sorted; hidden folders (`.runner`, `.git`),
    `__pycache__` and `node_modules` are skipped."""
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).parts
        hidden = any(part.startswith(".") or part in _SKIPPED_FOLDERS for part in relative)
        if not hidden and path.suffix in _YAML_SUFFIXES and path.is_file():
            yield path


def _looks_like_pipeline(path: Path) -> bool:
    """Decided on the text, so that a pipeline broken beyond parsing is still reported."""
    from runner.documents.loader import read_head

    text = read_head(path)
    if text is None:
        return False
    if _MODELINE.search(text[:2000]):
        return True
    return {match.group(1) for match in _TOP_LEVEL_KEY.finditer(text)} == {"domain", "tools"}
