"""Document collections: a corpus folder that holds documents (R122) that stay inside the
pipeline's folder once symlinks are followed (R124, unless the corpus sets `follow_symlinks`) —
or, for a corpus that names a folder elsewhere with an absolute or `~` path, inside that
folder — tools that name a declared corpus (R106), a synonyms file of words for words (R132),
an embedding model runner can run (R133) and `html.drop` selectors that parse as CSS (R134)."""

from __future__ import annotations

import glob
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_document, existing_path, inside_folder
from runner.config.corpus_files import document_format, excluded, folder_glob
from runner.config.humanize import suggestion_suffix
from runner.config.keys import default, filled
from runner.config.paths import (
    PathOutsideFolder,
    PathUnusable,
    contained_documents,
    written_outside,
)
from runner.config.schema import definition_validator
from runner.documents.diagnostics import KeyPath
from runner.embedding import DEFAULT_MODEL, REQUIRED_FILES, is_packaged

# the keys of an `embedding:` block that only a service (`provider`) reads
SERVICE_KEYS = (
    "api_base",
    "api_key_env",
    "class",
    "options",
    "timeout_s",
    "batch_size",
    "max_chars",
)


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
    if "embedding" in spec and "provider" in spec["embedding"]:
        embedding_service(checks, spec["embedding"], ("corpora", name, "embedding"))
    elif "embedding" in spec:
        embedding_model(checks, spec["embedding"]["model"], ("corpora", name, "embedding", "model"))
        for key in SERVICE_KEYS:
            if key in spec["embedding"]:
                checks.emit(
                    "R133",
                    f"`embedding.{key}` is of a service, and no `provider` is named",
                    ("corpora", name, "embedding", key),
                    hint="add `provider: openai_like` to embed with the service, or drop the key",
                )
    if isinstance(spec.get("synonyms"), str):
        synonyms_file(checks, spec["synonyms"], ("corpora", name, "synonyms"))
    corpus = filled(spec, "corpus")  # with the defaults of what it leaves out, as it runs
    for index, selector in enumerate(filled(corpus["html"], "corpus", "html")["drop"]):
        css_selector(checks, selector, ("corpora", name, "html", "drop", index))
    follow = corpus["follow_symlinks"]
    where = ("corpora", name, "path")
    root = checks.folder  # the folder the documents must stay in
    if written_outside(spec["path"]):  # a folder elsewhere, named on purpose
        folder = root = Path(spec["path"]).expanduser()
        checks.note_path(folder, contents=False)
        if not folder.is_dir():
            checks.emit(
                "R107",
                f"folder not found: `{spec['path'][:60]}`",
                where,
                hint="an absolute or ~ path names a folder of this machine: check it exists",
            )
            return
    else:
        found = existing_path(checks, spec["path"], where, folder=True, follow_symlinks=follow)
        if found is None:
            return
        folder = found
        checks.note_path(folder, contents=False)  # its documents are listed, never read here
    include, exclude = corpus["include"], corpus["exclude"]
    matched = corpus_documents(checks, name, folder, include)
    documents = [path for path in matched if not excluded(path.relative_to(folder), exclude)]
    try:
        contained_documents(name, documents, root, follow_symlinks=follow)
    except PathOutsideFolder as error:
        checks.emit("R124", error.problem, where, hint=error.hint)
    except PathUnusable as error:
        checks.emit("R125", f"corpus `{name}`: {error.problem}", where, hint=error.hint)
    refused = any(checks.is_broken((*where[:2], "include", i)) for i in range(len(include)))
    if not documents and not refused:
        problem, hint = _no_documents(name, spec["path"], include, exclude, matched)
        checks.emit("R122", problem, where, hint=hint, warning=True)


def embedding_service(checks: Checks, spec: Mapping[str, Any], where: KeyPath) -> None:
    """A service that embeds (`provider`): its `api_base` given, and no reranking asked of it,
    which needs word-piece vectors an embeddings endpoint does not give (R133)."""
    if "api_base" not in spec and spec["provider"] != "llama_index":
        checks.emit(
            "R133",
            f"embedding `provider: {spec['provider']}` needs `api_base`",
            where,
            hint="give the endpoint's base URL, the part before /embeddings: "
            "`api_base: http://127.0.0.1:8080/v1`",
            at_key=True,
        )
    if spec["provider"] == "llama_index" and "class" in spec:
        from runner.embedding.class_embedder import not_installed

        missing = not_installed(spec["class"])
        if missing is not None:
            checks.emit(
                "R133",
                f"embedding class `{spec['class']}`: {missing}",
                (*where, "class"),
                hint="install the class's package where runner indexes and answers",
                warning=True,
            )
    readers = {"class": ("llama_index",), "options": ("llama_index", "ollama")}
    for key, providers in readers.items():
        if key in spec and spec["provider"] not in providers:
            checks.emit(
                "R133",
                f"`embedding.{key}` is read by provider {' or '.join(providers)}, not by "
                f"{spec['provider']}",
                (*where, key),
                hint=f"drop `{key}`, or name the provider that reads it",
            )
    if isinstance(spec.get("rerank", 0), int) and spec.get("rerank", 0) > 0:
        checks.emit(
            "R133",
            "a corpus embedded by a service cannot rerank: an embeddings endpoint gives no "
            "word-piece vectors",
            (*where, "rerank"),
            hint="write `rerank: 0` or leave it out, name a rerank endpoint (`rerank: "
            "{provider: tei, api_base: ...}`), or drop `provider` to embed with runner's own model",
        )


def embedding_model(checks: Checks, model: str, where: KeyPath) -> None:
    """A model runner carries, or a folder in ours that holds a BERT model's files (R133)."""
    if is_packaged(model):
        return
    folder = checks.folder / model
    if not folder.is_dir():
        checks.emit(
            "R133",
            f"embedding model `{model[:60]}` is neither a model runner carries nor a folder",
            where,
            hint=f"name `{DEFAULT_MODEL}` (nothing is downloaded), or a folder beside the "
            "pipeline holding a sentence-transformers model saved with safetensors, or a "
            "service that serves it (`provider: openai_like`, `ollama` or `llama_index`); "
            "runner does not fetch models by name",
        )
        return
    if inside_folder(checks, model, where) is None:
        return
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        checks.emit(
            "R133",
            f"the model folder `{model[:60]}` lacks {', '.join(missing)}",
            where,
            hint="save the model with sentence-transformers and safetensors "
            "(config.json, tokenizer.json, model.safetensors)",
        )


def css_selector(checks: Checks, selector: str, where: KeyPath) -> None:
    """A selector of the site's own bars that cssselect reads (R134). Without cssselect (the
    `html` extra) nothing is checked here: reading the HTML pages then fails, naming the extra."""
    try:
        from cssselect import HTMLTranslator, SelectorError
    except ImportError:
        return
    try:
        HTMLTranslator().css_to_xpath(selector)
    except SelectorError as error:
        checks.emit(
            "R134",
            f"`{selector[:60]}` is not a CSS selector runner can use: {error}",
            where,
            hint="write a CSS selector such as `#page-header`, `div.crumbs` or "
            "`nav.site > ul` (a pseudo-element such as `::before` selects no element)",
        )


def synonyms_file(checks: Checks, relative: str, where: KeyPath) -> None:
    """A YAML file of users' words for the documents' words (R132, placed in that file)."""
    document = existing_document(checks, relative, where)
    if document is None:
        return
    if not isinstance(document.data, Mapping):
        checks.emit(
            "R132",
            "a synonyms file must be a YAML mapping of a user's word to the documents' word(s)",
            (),
            document=document,
            hint="one line each: `wipe: clear`, `quicker: [faster, speed]`",
        )
        return
    validator = definition_validator("synonym_map")
    for error in validator.iter_errors(document.data):
        place: KeyPath = tuple(error.absolute_path)
        checks.emit(
            "R132",
            "a synonym must map a word or phrase to a word or phrase, or a list of them: "
            f"{_shown(error.instance)} is not one",
            place,
            document=document,
            at_key=error.validator == "propertyNames",
            hint="write `user word: document word` or `user word: [word, other word]`",
        )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _no_documents(
    name: str, path: str, include: Sequence[str], exclude: Sequence[str], matched: Sequence[Path]
) -> tuple[str, str]:
    """R122's message and hint: nothing matched, or `exclude` left nothing of what did."""
    patterns = ", ".join(include)
    if matched:
        what = "the one file" if len(matched) == 1 else f"all {len(matched)} files"
        return (
            f"corpus `{name}` has no documents: `exclude` ({', '.join(exclude)}) leaves out "
            f"{what} of {path} that `include` ({patterns}) matches",
            "narrow `exclude`, or add documents",
        )
    if list(include) == default("corpus", "include"):
        return (
            f"corpus `{name}` has no documents: {path} holds no file runner reads",
            "add .md, .rst, .txt, .html or .pdf files",
        )
    return (
        f"corpus `{name}` has no documents: nothing in {path} matches {patterns}",
        "add documents or change `include`; runner reads .md, .rst, .txt, .html and .pdf files",
    )


def corpus_documents(checks: Checks, name: str, folder: Path, include: Sequence[str]) -> list[Path]:
    """The documents `include` matches below the corpus folder: files of a format runner reads,
    hidden ones left out (as the retrieval layer lists them); a pattern the file system cannot
    use is R125."""
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
            # glob.glob, as the index lists the corpus (Path.glob reads `docs/**` as folders only)
            found_here = glob.glob(folder_glob(pattern), root_dir=folder, recursive=True)
            matches = [folder / name for name in found_here if (folder / name).is_file()]
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
            relative = path.relative_to(folder)
            if document_format(path.name) and not any(p.startswith(".") for p in relative.parts):
                found[path] = None
    return list(found)
