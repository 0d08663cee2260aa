"""Document collections: a corpus folder that holds documents (R122) that stay inside the
pipeline's folder once symlinks are followed (R124, unless the corpus sets `follow_symlinks`),
and tools that name a declared corpus (R106)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path, inside_folder
from runner.config.humanize import suggestion_suffix
from runner.config.paths import PathOutsideFolder, PathUnusable, contained_documents


def corpora(checks: Checks) -> None:
    declared = checks.data.get("corpora", {})
    for name, spec in declared.items():
        if "embedding" in spec:  # a model name, or a folder that must stay in ours
            model = spec["embedding"]["model"]
            inside_folder(checks, model, ("corpora", name, "embedding", "model"))
        follow = spec.get("follow_symlinks", False)
        where = ("corpora", name, "path")
        folder = existing_path(checks, spec["path"], where, folder=True, follow_symlinks=follow)
        if folder is None:
            continue
        include = spec.get("include", ["**/*.md", "**/*.txt", "**/*.rst"])
        documents = corpus_documents(folder, include)
        try:
            contained_documents(name, documents, checks.folder, follow_symlinks=follow)
        except PathOutsideFolder as error:
            checks.emit("R124", error.problem, where, hint=error.hint)
        except PathUnusable as error:
            checks.emit("R125", f"corpus `{name}`: {error.problem}", where, hint=error.hint)
        if not documents:
            checks.emit(
                "R122",
                f"corpus `{name}` has no documents: nothing in {spec['path']} matches "
                f"{', '.join(include)}",
                ("corpora", name, "path"),
                hint="add documents or change `include`",
                warning=True,
            )
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


def corpus_documents(folder: Path, include: Sequence[str]) -> list[Path]:
    """The files `include` matches below the corpus folder, hidden ones left out (as the
    retrieval layer reads them)."""
    found: dict[Path, None] = {}
    for pattern in include:
        for path in folder.glob(pattern):
            hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
            if not hidden and path.is_file():
                found[path] = None
    return list(found)
