"""Document collections: a corpus folder that holds documents (R122) that stay inside the
pipeline's folder once symlinks are followed (R124, unless the corpus sets `follow_symlinks`),
and tools that name a declared corpus (R106)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path, inside_folder
from runner.config.humanize import suggestion_suffix
from runner.config.paths import PathOutsideFolder, PathUnusable, contained_documents


def corpora(checks: Checks) -> None:
    declared = checks.data.get("corpora", {})
    for name, spec in declared.items():
        corpus(checks, name, spec)
    for path, tool in checks.tool_items():
        if "corpus" in tool and tool["corpus"] not in declared:
            names = list(declared)
            checks.emit(
                "R106",
                f"unknown corpus `{tool['corpus']}`" + suggestion_suffix(tool["corpus"], names),
                (*path, "corpus"),
                hint=f"declared corpora: {', '.join(names)}"
                if names
                else "declare it under `corpora:` with its folder",
            )


def corpus(checks: Checks, name: str, spec: Mapping[str, Any]) -> None:
    if "embedding" in spec:  # a model name, or a folder that must stay in ours
        model = spec["embedding"]["model"]
        inside_folder(checks, model, ("corpora", name, "embedding", "model"))
    follow = spec.get("follow_symlinks", False)
    where = ("corpora", name, "path")
    folder = existing_path(checks, spec["path"], where, folder=True, follow_symlinks=follow)
    if folder is None:
        return
    include = spec.get("include", ["**/*.md", "**/*.txt", "**/*.rst"])
    documents = corpus_documents(checks, name, folder, include)
    try:
        contained_documents(name, documents, checks.folder, follow_symlinks=follow)
    except PathOutsideFolder as error:
        checks.emit("R124", error.problem, where, hint=error.hint)
    except PathUnusable as error:
        checks.emit("R125", f"corpus `{name}`: {error.problem}", where, hint=error.hint)
    refused = any(checks.is_broken((*where[:2], "include", i)) for i in range(len(include)))
    if not documents and not refused:
        checks.emit(
            "R122",
            f"corpus `{name}` has no documents: nothing in {spec['path']} matches "
            f"{', '.join(include)}",
            ("corpora", name, "path"),
            hint="add documents or change `include`",
            warning=True,
        )


def corpus_documents(checks: Checks, name: str, folder: Path, include: Sequence[str]) -> list[Path]:
    """The files `include` matches below the corpus folder, hidden ones left out (as the
    retrieval layer reads them); a pattern the file system cannot use is R125."""
    found: dict[Path, None] = {}
    for index, pattern in enumerate(include):
        where = ("corpora", name, "include", index)
        pure = PurePosixPath(pattern.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts:
            checks.emit(
                "R108",
                f"the pattern `{pattern[:60]}` leaves the corpus folder",
                where,
                hint="a pattern is relative to the corpus `path`, e.g. `**/*.md`",
            )
            checks.mark_broken(where)
            continue
        try:
            matches = [path for path in folder.glob(pattern) if path.is_file()]
        except OSError as error:
            checks.emit(
                "R125",
                f"the pattern `{pattern[:60]}` cannot be used: {error.strerror or error}",
                where,
                hint="shorten the pattern",
            )
            checks.mark_broken(where)
            continue
        for path in matches:
            if not any(part.startswith(".") for part in path.relative_to(folder).parts):
                found[path] = None
    return list(found)
