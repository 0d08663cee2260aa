"""Document collections: a corpus folder that holds documents (R122), and tools that name a
declared corpus (R106)."""

from __future__ import annotations

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path, inside_folder
from runner.config.humanize import suggestion_suffix


def corpora(checks: Checks) -> None:
    declared = checks.data.get("corpora", {})
    for name, spec in declared.items():
        if "embedding" in spec:  # a model name, or a folder that must stay in ours
            model = spec["embedding"]["model"]
            inside_folder(checks, model, ("corpora", name, "embedding", "model"))
        folder = existing_path(checks, spec["path"], ("corpora", name, "path"), folder=True)
        if folder is None:
            continue
        include = spec.get("include", ["**/*.md", "**/*.txt", "**/*.rst"])
        if not any(next(folder.glob(pattern), None) for pattern in include):
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
