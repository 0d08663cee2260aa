"""The one redactor: nothing that leaves runner carries a credential or a path of the machine.

An LLM or MCP server's error body can echo the request's `Authorization` header, its API key or
its environment, and runner passes such errors on (a round's `error`, its warnings, its trace,
its stream's progress events); an error message can name a file (`…/.runner/state.sqlite`).
`Redactor` removes both from what goes out: a credential becomes `[redacted]`
(runner.text.credentials: the pipeline's declared secrets and the common shapes), the
pipelines' folders become relative names (`support/.runner/…`), and in error messages any other
absolute path of this machine is cut to its file name. Every way out uses it: the service's
answers and streams (runner.service), the playground, an eval run's files (runner.eval.results),
trace files (runner.trace) and the service's log lines (`redact_logs`).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from runner.text.credentials import hide_credentials

# the field of a trace event that holds an exception's traceback (runner.engine.failure)
TRACEBACK = "traceback"
# an absolute path: not after a word, a colon or a slash (so not a URL's path)
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~])(/[^\s'\"`<>(),;]+)")
# what joins a JSON value's strings for one pass of `Redactor.text`: not a word character, not
# a space, in no credential's shape, and in no text a round makes
_SEPARATOR = "\x00"


class Redactor:
    """Redacts the texts of a service whose own folders are `roots`."""

    def __init__(self, roots: Iterable[Path] = ()) -> None:
        # a pipeline folder is shown by its name (`support/.runner/…`), the working folder's
        # files relative to it; the longest first, so the most precise one applies
        shown_from = [root.resolve().parent for root in roots] + [Path.cwd().resolve()]
        self._roots = sorted({str(root) for root in shown_from}, key=len, reverse=True)
        self._home = str(Path.home())

    def text(self, text: str) -> str:
        text = hide_credentials(text)
        if "/" not in text:
            return text
        for root in self._roots:
            if root != "/":
                text = text.replace(root + os.sep, "")
        return text.replace(self._home + os.sep, "~/") if self._home != "/" else text

    def error(self, message: str) -> str:
        """An error message: as `text`, and any other absolute path of this machine cut to
        its file name."""
        return _ABSOLUTE_PATH.sub(_file_name, self.text(message))

    def json(self, value: Any) -> Any:
        """A JSON value with every string in it redacted; a trace event's `traceback` as an
        error message (every path of this machine cut to its file name). A value with nothing
        to redact comes back as it is (the same object), else as a redacted copy."""
        strings: list[str] = []
        if _plain_strings(value, strings):
            # one pass over all its strings at once, not one per string: `text` leaves the
            # joined text as it is only when it would leave each string as it is (a separator
            # no string holds ends every match a string's own would make; a match across two
            # strings changes the joined text, and then each string is redacted on its own)
            joined = _SEPARATOR.join(strings)
            if self.text(joined) == joined:
                return value
        return self._each(value)

    def _each(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                key: self.error(item)
                if key == TRACEBACK and isinstance(item, str)
                else self._each(item)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self._each(item) for item in value]
        return value


def _plain_strings(value: Any, strings: list[str]) -> bool:
    """Adds the strings in `value` (as `Redactor.json` walks it) to `strings`; False when one
    of them cannot be redacted as part of a joined text: a `traceback` (redacted as an error
    message) or one holding the separator."""
    if isinstance(value, str):
        if _SEPARATOR in value:
            return False
        strings.append(value)
        return True
    if isinstance(value, dict):
        for key, item in value.items():
            if key == TRACEBACK and isinstance(item, str):
                return False
            if not _plain_strings(item, strings):
                return False
        return True
    if isinstance(value, list):
        return all(_plain_strings(item, strings) for item in value)
    return True


def _file_name(match: re.Match[str]) -> str:
    path = match.group(1)
    first = path.split("/")[1] if path.count("/") > 1 else ""
    if not first or not _is_folder_here("/" + first):
        return path  # `/v1/chat/completions`, `/playground/…`: not a file of this machine
    return "…/" + path.rstrip("/").rsplit("/", 1)[-1]


@cache
def _is_folder_here(path: str) -> bool:
    return os.path.isdir(path) or path == sys.prefix


ERRORS = Redactor()


_TRACEBACKS = logging.Formatter()


def redact_logs(redactor: Redactor = ERRORS) -> None:
    """Every log record made from now on, of any logger, carries its message redacted (its
    arguments merged into it first, so that a credential in an argument is caught too), and
    its traceback, when it has one."""
    current = logging.getLogRecordFactory()
    if getattr(current, "redacting", False):
        return
    logging.setLogRecordFactory(_redacting_factory(current, redactor))


def _redacting_factory(make: Any, redactor: Redactor) -> Any:
    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format: left to logging
            return record
        record.msg, record.args = redactor.text(message), ()
        if record.exc_info and record.exc_info[1] is not None:  # its traceback, as told
            record.exc_text = redactor.text(_TRACEBACKS.formatException(record.exc_info))
        return record

    factory.redacting = True  # type: ignore[attr-defined]  # a mark on a function object
    return factory
