"""docs/tutorial.md, done as a reader would do it: every file the page shows is written into an
empty folder, every command it shows is run with the real command line, and every output it
shows is compared with the real one — volatile parts aside (session ids, timings, token counts,
absolute paths). A failure lists each stale output with the real one, ready to paste.

How the page is read (keep these conventions when editing it):

- a code block whose label — the last line before it — ends with a path in backticks
  (`` `cafe/menu.csv` ``, ``Create `cafe/tests/cafe.yaml`:``) is that file's content; with
  ``(append)`` after the path it is added at the end of the file, after a blank line;
- a code block whose first line starts with ``$ `` is a console session: each ``$ runner …``
  line is run, and the lines under it, up to the next ``$ `` line, are its output (stdout and
  stderr, as a terminal shows them). Its exit status must be 3 for a clarifying question (the
  output starts with ``? ``), 1 when the output reports a failure (``N invalid``, ``FAIL``),
  else 0;
- in the prose since the previous code block, ``"`new` instead of `old`"`` and
  ``"change … `old` to `new`"`` are deliberate mistakes: `old`, found exactly once in the files
  written so far, is replaced for the next console session only, and put back after it;
- the ``sh`` block of the install step: its ``runner`` lines must exit 0;
- a ``runner …`` command quoted in the prose must name a real command and real options, and the
  ones that run offline as written (a ``cafe/`` path, no ``…``, no ``--llm``) must exit 0 once
  the tutorial is done.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import Result

from runner.cli import main

from .conftest import ROOT, crash, failure

DOC = ROOT / "docs" / "tutorial.md"
NAME = "docs/tutorial.md"

FENCE = re.compile(r"^```(\w*)\s*$")
LABEL = re.compile(r"`(?P<path>cafe/[^`\s]+)`(?P<append> \(append\))?:?$")
INSTEAD = re.compile(r"`(?P<new>[^`]+)` instead of `(?P<old>[^`]+)`")
CHANGE = re.compile(r"\b[Cc]hange\b[^`]*`(?P<old>[^`]+)` to `(?P<new>[^`]+)`")
SCHEMA_COMMENT = re.compile(r"^# yaml-language-server: \$schema=(?P<schema>\S+)$", re.M)

# what changes from one run to the next, and what it is shown as in a comparison
VOLATILE = [
    (re.compile(r"\bsession [0-9a-f]{12}\b"), "session <id>"),
    (re.compile(r"\b\d+ ms\b"), "<n> ms"),
    (re.compile(r"\(\d+(?:\.\d+)? s\)"), "(<t> s)"),
    (re.compile(r"\b\d+ tokens\b"), "<n> tokens"),
]


@dataclass
class Block:
    lang: str
    text: str  # the lines between the fences, each ending with a newline
    line: int  # the line number of the opening fence
    label: str  # the last non-blank line before the block
    prose: str  # the text since the previous block, on one line

    @property
    def where(self) -> str:
        return f"{NAME}:{self.line}"


@dataclass
class Command:
    line: int
    text: str
    shown: list[str] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        words = shlex.split(self.text)
        assert words[0] == "runner", f"{NAME}:{self.line}: not a runner command: {self.text}"
        return words[1:]


def blocks(markdown: str) -> Iterator[Block]:
    lines = markdown.splitlines(keepends=True)
    prose: list[str] = []
    number = 0
    while number < len(lines):
        fence = FENCE.match(lines[number])
        if fence is None:
            prose.append(lines[number])
            number += 1
            continue
        end = next(i for i in range(number + 1, len(lines)) if lines[i].startswith("```"))
        label = next((line.strip() for line in reversed(prose) if line.strip()), "")
        yield Block(
            lang=fence[1],
            text="".join(lines[number + 1 : end]),
            line=number + 1,
            label=label,
            prose=" ".join("".join(prose).split()),
        )
        prose = []
        number = end + 1


def console(block: Block) -> list[Command]:
    commands: list[Command] = []
    for offset, line in enumerate(block.text.splitlines(), start=block.line + 1):
        if line.startswith("$ "):
            commands.append(Command(offset, line[2:]))
        else:
            commands[-1].shown.append(line)
    return commands


def mistakes(prose: str) -> list[tuple[str, str]]:
    """The deliberate mistakes the prose asks for, as (old, new) pairs."""
    return [(m["old"], m["new"]) for pattern in (INSTEAD, CHANGE) for m in pattern.finditer(prose)]


def normalise(output: str, folder: Path) -> str:
    for path in {str(folder.resolve()), str(folder)}:
        output = output.replace(path, "<tmp>")
    for pattern, replacement in VOLATILE:
        output = pattern.sub(replacement, output)
    return "\n".join(line.rstrip() for line in output.splitlines()).rstrip("\n")


def expected_status(shown: str) -> int:
    if shown.startswith("? "):
        return 3  # a clarifying question
    if re.search(r"^\s*FAIL\s", shown, re.M) or re.search(r"\b[1-9]\d* invalid\b", shown):
        return 1
    return 0


def compare(command: Command, result: Result, folder: Path) -> str | None:
    """None when the output and the exit status are the page's, else the difference."""
    shown = "\n".join(command.shown)
    status = expected_status(shown)
    want, got = normalise(shown, folder), normalise(result.output, folder)
    if want == got and result.exit_code == status:
        return None
    diff = "\n".join(
        difflib.unified_diff(want.splitlines(), got.splitlines(), "shown", "real", lineterm="", n=2)
    )
    return (
        f"{NAME}:{command.line}: $ {command.text}\n"
        f"exit status {result.exit_code}, the page implies {status}\n{diff}\n"
        f"--- the real output, to paste:\n{result.output}{crash(result)}"
    )


def prose_commands(markdown: str) -> list[str]:
    """The `runner …` commands quoted in the prose (outside code blocks), on one line each."""
    text = re.sub(r"^```\w*\n.*?^```\n", "", markdown, flags=re.M | re.S)
    spans = (" ".join(span.split()) for span in re.findall(r"`([^`]+)`", text))
    return [span for span in spans if span.startswith("runner ")]


def runs_offline(argv: list[str]) -> bool:
    text = " ".join(argv)
    return any(arg.startswith("cafe/") for arg in argv) and "…" not in text and "--llm" not in argv


def test_every_output_the_tutorial_shows_is_the_real_one(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    markdown = DOC.read_text(encoding="utf-8")
    files: dict[str, str] = {}
    problems: list[str] = []
    ran = 0

    def write(path: str, text: str) -> None:
        files[path] = text
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")

    for block in blocks(markdown):
        label = LABEL.search(block.label)
        edits = mistakes(block.prose)
        if block.text.startswith("$ "):
            originals = dict(files)
            for old, new in edits:
                holders = [path for path, text in files.items() if old in text]
                assert len(holders) == 1 and files[holders[0]].count(old) == 1, (
                    f"{block.where}: `{old}` must occur exactly once in the files written so "
                    f"far, to be replaced by `{new}` (it is in {holders})"
                )
                write(holders[0], files[holders[0]].replace(old, new))
            for command in console(block):
                problem = compare(command, cli(*command.argv), tmp_path)
                if problem is not None:
                    problems.append(problem)
                ran += 1
            for path, text in originals.items():
                if files[path] != text:
                    write(path, text)
        elif edits:
            raise AssertionError(
                f"{block.where}: a mistake to make ({edits}) must come just "
                "before the console session that shows it"
            )
        elif label is not None:
            text = block.text
            if label["append"]:
                assert label["path"] in files, f"{block.where}: nothing to append to"
                text = files[label["path"]] + "\n" + text
            write(label["path"], text)
        elif block.lang == "sh":
            for line in block.text.splitlines():
                words = shlex.split(line, comments=True)
                if words[:1] == ["runner"]:
                    result = cli(*words[1:])
                    assert result.exit_code == 0, failure(line, result)
        else:
            raise AssertionError(
                f"{block.where}: a code block that is neither a file (its label ends with the "
                "path in backticks) nor a console session (its first line starts with `$ `)"
            )

    assert ran >= 5 and len(files) >= 4, f"{NAME} was not understood: {ran} commands, {files}"
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)
    # the page says where the index and the sessions are kept
    assert (tmp_path / "cafe" / ".runner").is_dir()

    for command in prose_commands(markdown):
        argv = shlex.split(command)[1:]
        if runs_offline(argv):
            result = cli(*argv, input="")
            assert result.exit_code == 0, failure(command, result)


def test_the_commands_quoted_in_the_prose_exist_with_their_options() -> None:
    commands = prose_commands(DOC.read_text(encoding="utf-8"))
    assert commands, f"no `runner …` command found in the prose of {NAME}"
    for command in commands:
        argv = shlex.split(command)[1:]
        found = main.get_command(click.Context(main), argv[0])
        assert found is not None, f"{NAME}: `{command}`: runner has no command {argv[0]!r}"
        options = {name for param in found.params for name in param.opts + param.secondary_opts}
        unknown = [arg for arg in argv if arg.startswith("-") and arg.split("=")[0] not in options]
        assert not unknown, f"{NAME}: `{command}`: `runner {argv[0]}` has no option {unknown}"


def test_the_schema_comments_point_at_the_repository_schemas() -> None:
    # the tutorial's `cafe/` is at the top of a clone of runner: its editor comments must find
    # schemas/ there
    found = 0
    for block in blocks(DOC.read_text(encoding="utf-8")):
        label = LABEL.search(block.label)
        comment = SCHEMA_COMMENT.search(block.text)
        if label is None or comment is None:
            continue
        schema = (ROOT / label["path"]).parent / comment["schema"]
        assert schema.resolve().is_file(), f"{block.where}: {comment['schema']} is not a schema"
        found += 1
    assert found, f"{NAME} has no file with a schema comment"
