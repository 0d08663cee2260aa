"""Validated pipeline data -> the typed, immutable model (runner.config.model).

Runs only on data that passed the schema and the semantic checks, so it trusts the shapes and
fills in the defaults: those the schema states (`filled`), never a value written here, and
those that depend on another part of the file (runner.config.defaults). Paths are resolved
against the pipeline's folder; objects an error may later need to point at get their `where`.

Public API (besides `build_pipeline`): `frozen(value)` makes free data read-only. A scripted-LLM
rule is built by runner.config.script_rules, which every place that reads such rules shares.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from runner.config.defaults import deep_search_tool_names, default_activation
from runner.config.frozen import FrozenDict, FrozenList, frozen
from runner.config.keys import defaults, filled
from runner.config.model import (
    Activation,
    ActivationMode,
    AnswerConfig,
    Clarify,
    Condition,
    ConditionKind,
    Corpus,
    Decompose,
    DeepFallback,
    DeepSearchOptions,
    Embedding,
    Extraction,
    Gatekeeper,
    KindOptions,
    Limits,
    LLMConfig,
    LookupOptions,
    McpOptions,
    McpServer,
    ModelSettings,
    NeighborSearchOptions,
    Output,
    Pipeline,
    PromptOptions,
    PromptType,
    PromptTypes,
    PythonOptions,
    RetrieveOptions,
    SearchOptions,
    SubtaskTemplate,
    TemplateRef,
    ToolConfig,
    ToolKind,
    Where,
)
from runner.config.paths import PathOutsideFolder, PathRefused, contained, written_outside
from runner.config.script_rules import script_rule
from runner.config.synonyms import synonym_map
from runner.documents.diagnostics import KeyPath, PipelineError
from runner.documents.loader import YamlFile

__all__ = ["FrozenDict", "FrozenList", "build_pipeline", "frozen"]


def build_pipeline(document: YamlFile) -> Pipeline:
    """The model of a document that passed the schema and the semantic checks."""
    return _Builder(document).pipeline()


class _Builder:
    def __init__(self, document: YamlFile) -> None:
        self.document = document
        self.file = document.path.resolve()
        self.folder = self.file.parent
        self.deep_search_tools = deep_search_tool_names(document.data)

    def where(self, path: KeyPath) -> Where:
        position = self.document.position(path)
        return Where(self.file, position.line, position.col)

    def file_path(self, relative: str | None) -> Path | None:
        """A path the pipeline writes to or names for another program (state, cache)."""
        return None if relative is None else self.folder / relative

    def read_path(self, relative: str, path: KeyPath, *, follow_symlinks: bool = False) -> Path:
        """A path runner reads content from (a template, table, corpus, script, plugin
        folder), with its symlinks followed, so that what runs is the file validation checked.
        Validation refused a path that leaves the folder (R124, R125); one that does now was
        changed since, and stops the build."""
        target = self.folder / relative
        if follow_symlinks:
            return target
        try:
            return contained(target, self.folder)
        except PathRefused as error:
            code = "R124" if isinstance(error, PathOutsideFolder) else "R125"
            diagnostic = self.document.diagnostic(code, error.problem, path, hint=error.hint)
            raise PipelineError(self.file, (diagnostic,)) from None

    def optional_read_path(self, relative: str | None, path: KeyPath) -> Path | None:
        return None if relative is None else self.read_path(relative, path)

    def template(self, data: Mapping[str, Any] | None, path: KeyPath) -> TemplateRef | None:
        """A `template` (file) / `prompt` (inline) pair, or None when neither is given."""
        if not data:
            return None
        if "template" in data:
            return TemplateRef(
                path=self.read_path(data["template"], (*path, "template")),
                where=self.where((*path, "template")),
            )
        if "prompt" in data:
            return self.inline(data["prompt"], (*path, "prompt"))
        return None

    def inline(self, text: str, path: KeyPath) -> TemplateRef:
        return TemplateRef(inline=text, where=self.where(path))

    def file_template(self, relative: str | None, path: KeyPath) -> TemplateRef | None:
        if relative is None:
            return None
        return TemplateRef(path=self.read_path(relative, path), where=self.where(path))

    # --- the pipeline ------------------------------------------------------------------

    def pipeline(self) -> Pipeline:
        data = filled(self.document.data, "pipeline")
        deep = data.get("deep_fallback")
        return Pipeline(
            path=self.file,
            domain=data["domain"],
            tools=tuple(self.tool(tool, ("tools", i)) for i, tool in enumerate(data["tools"])),
            version=data["version"],
            description=data["description"],
            llm=self.llm(data["llm"]),
            prompt_types=self.prompt_types(data.get("prompt_types")),
            corpora=MappingProxyType(
                {name: self.corpus(name, spec) for name, spec in data["corpora"].items()}
            ),
            mcp_servers=MappingProxyType(
                {name: self.mcp_server(name, spec) for name, spec in data["mcp_servers"].items()}
            ),
            retrieval_tool=data.get("retrieval_tool"),
            deep_fallback=self.deep_fallback(deep) if deep is not None else None,
            answer=self.answer(data["answer"]),
            limits=Limits(**filled(data["limits"], "limits")),
            state_dir=self.file_path(data.get("state_dir")),
            content_hash=hashlib.sha256(self.document.text.encode("utf-8")).hexdigest(),
        )

    def llm(self, data: Mapping[str, Any]) -> LLMConfig:
        data = filled(data, "llm")
        cache = data["cache"]
        cache_path = self.file_path(cache.get("path")) if isinstance(cache, Mapping) else None
        plain = _pick(
            data,
            "provider",
            "model",
            "api_base",
            "api_key_env",
            "temperature",
            "max_tokens",
            "timeout_s",
            "max_retries",
            "concurrency",
            "structured_retries",
            "fallback",
            "structured",
            "context_window",
        )
        # `script_file` stays a path: the LLM layer reads it (it can also come from the CLI)
        rules = tuple(
            script_rule(rule, self.where(("llm", "script", i)))
            for i, rule in enumerate(data["script"])
        )
        return LLMConfig(
            **plain,
            cache=bool(cache),
            cache_path=cache_path,
            cassette=self.optional_read_path(data.get("cassette"), ("llm", "cassette")),
            script=rules,
            script_file=self.optional_read_path(data.get("script_file"), ("llm", "script_file")),
            llm_class=data.get("class"),
            options=MappingProxyType(dict(data["options"])),
            sampling=MappingProxyType(dict(data["sampling"])),
            purposes=MappingProxyType(
                {name: ModelSettings(**spec) for name, spec in data["purposes"].items()}
            ),
            templates=MappingProxyType(
                {
                    purpose: TemplateRef(
                        path=self.read_path(file, ("llm", "templates", purpose)),
                        where=self.where(("llm", "templates", purpose)),
                    )
                    for purpose, file in data["templates"].items()
                }
            ),
        )

    def prompt_types(self, data: Mapping[str, Any] | None) -> PromptTypes:
        if data is None:
            return PromptTypes()
        data = filled(data, "prompt_types")
        types = tuple(self.prompt_type(name, spec) for name, spec in data["types"].items())
        return PromptTypes(
            default=data.get("default", types[0].name),  # the first type: no fixed value
            classify=data["classify"],
            types=types,
        )

    @staticmethod
    def prompt_type(name: str, spec: str | Mapping[str, Any]) -> PromptType:
        if isinstance(spec, str):
            return PromptType(name, spec)
        spec = filled(spec, "prompt_type")
        # `keywords`, when given, are at least one: left out, there are none
        keywords = tuple(spec.get("keywords", ()))
        return PromptType(name, spec["description"], keywords, spec.get("pattern"))

    def corpus(self, name: str, spec: Mapping[str, Any]) -> Corpus:
        spec = filled(spec, "corpus")
        pages = filled(spec["pages"], "corpus", "pages")
        extra: dict[str, Any] = {
            "include": tuple(spec["include"]),
            "exclude": tuple(spec["exclude"]),
            "max_words": pages["max_words"],
            "navigation": pages["navigation"],
            "html_drop": tuple(filled(spec["html"], "corpus", "html")["drop"]),
        }
        if "embedding" in spec:
            extra["embedding"] = self.embedding(filled(spec["embedding"], "corpus", "embedding"))
        if "synonyms" in spec:
            extra["synonyms"] = self.synonyms(spec["synonyms"], ("corpora", name, "synonyms"))
        follow = spec["follow_symlinks"]
        where = ("corpora", name, "path")
        if written_outside(spec["path"]):  # a folder elsewhere, named on purpose
            path = Path(spec["path"]).expanduser().resolve()
            return Corpus(name=name, path=path, follow_symlinks=follow, outside=True, **extra)
        return Corpus(
            name=name,
            path=self.read_path(spec["path"], where, follow_symlinks=follow),
            follow_symlinks=follow,
            **extra,
        )

    def embedding(self, spec: Mapping[str, Any]) -> Embedding:
        written = spec["rerank"]
        endpoint = isinstance(written, Mapping)
        reranker = frozen(filled(written, "rerank_endpoint")) if endpoint else None
        if reranker is not None:  # an endpoint reranks: `candidates` says how many
            count = reranker["candidates"]
        elif "provider" in spec:  # a service gives no word pieces: R133 let only 0 through
            count = 0
        else:
            count = written
        if "provider" in spec:
            service = _pick(spec, "provider", "api_base", "api_key_env")
            settings = frozen(
                _pick(spec, "class", "options", "timeout_s", "batch_size", "max_chars")
            )
            return Embedding(spec["model"], count, **service, settings=settings, reranker=reranker)
        model = self.embedding_model(spec["model"])
        return Embedding(model, count, reranker=reranker)

    def embedding_model(self, model: str) -> str:
        """A folder beside the pipeline that holds a model, as an absolute path; anything else
        is the name of a model runner carries (validation refused any other name: R133)."""
        local = self.folder / model
        return str(local) if local.is_dir() else model

    def mcp_server(self, name: str, spec: Mapping[str, Any]) -> McpServer:
        spec = filled(spec, "mcp_server")
        return McpServer(
            name=name,
            command=spec.get("command"),
            args=tuple(spec["args"]),
            env=frozen(spec["env"]),
            url=spec.get("url"),
            headers=frozen(spec["headers"]),
            folder=self.folder,
            **_pick(spec, "timeout_s", "start_timeout_s"),
        )

    def synonyms(self, spec: str | Mapping[str, Any], path: KeyPath) -> dict[str, tuple[str, ...]]:
        """An inline mapping, or the one a YAML file holds (checked by validation: R132)."""
        if not isinstance(spec, str):
            return synonym_map(spec)
        from runner.documents.loader import read_document

        return synonym_map(read_document(self.read_path(spec, path)).data)

    def deep_fallback(self, data: Mapping[str, Any]) -> DeepFallback:
        data = filled(data, "deep_fallback")
        gate = filled(data["gatekeeper"], "gatekeeper")
        gate_path = ("deep_fallback", "gatekeeper")
        gatekeeper = Gatekeeper(
            **_pick(gate, "mode", "min_coverage"),
            template=self.template(gate, gate_path),
        )
        return DeepFallback(
            coordinator=data["coordinator"],
            prompt_types=tuple(data["prompt_types"]),
            gatekeeper=gatekeeper,
        )

    def answer(self, data: Mapping[str, Any]) -> AnswerConfig:
        data = filled(data, "answer")
        return AnswerConfig(
            template=self.template(data, ("answer",)), **_pick(data, "max_context_items")
        )

    # --- tools -------------------------------------------------------------------------

    def tool(self, data: Mapping[str, Any], path: KeyPath) -> ToolConfig:
        kind = ToolKind(data["kind"])
        # the defaults of the keys every tool has and of its kind's own (the activation's
        # depends on the deep_search tools: runner.config.defaults)
        data = {
            **defaults("tool"),
            **defaults(f"{kind.value}_tool"),
            "activation": default_activation(data, self.deep_search_tools),
            **data,
        }
        coordinator_output = data.get("coordinator_output")
        return ToolConfig(
            name=data["name"],
            kind=kind,
            description=data["description"],
            priority=data["priority"],
            activation=self.activation(data["activation"]),
            instruction=data["instruction"],
            examples=tuple(data["examples"]),
            consumes_context=data["consumes_context"],
            output=Output(data["output"]),
            coordinator_output=Output(coordinator_output) if coordinator_output else None,
            decompose=self.decompose(data["decompose"], (*path, "decompose"))
            if "decompose" in data
            else None,
            prompt_types=tuple(data["prompt_types"]),
            options=self.options(kind, data, path),
            where=self.where(path),
        )

    @staticmethod
    def activation(data: str | Mapping[str, Any]) -> Activation:
        if isinstance(data, str):
            return Activation(ActivationMode(data))
        # `keywords`, when given, are at least one: left out, there are none
        keywords = tuple(data.get("keywords", ()))
        return Activation(ActivationMode.RULE, keywords, data.get("pattern"))

    def options(self, kind: ToolKind, data: Mapping[str, Any], path: KeyPath) -> KindOptions:
        builders: dict[ToolKind, Callable[[Mapping[str, Any], KeyPath], KindOptions]] = {
            ToolKind.PROMPT: self.prompt_options,
            ToolKind.LOOKUP: self.lookup_options,
            ToolKind.RETRIEVE: self.retrieve_options,
            ToolKind.SEARCH: self.search_options,
            ToolKind.NEIGHBOR_SEARCH: self.neighbor_options,
            ToolKind.DEEP_SEARCH: self.deep_search_options,
            ToolKind.PYTHON: self.python_options,
            ToolKind.MCP: self.mcp_options,
        }
        return builders[kind](data, path)

    def prompt_options(self, data: Mapping[str, Any], path: KeyPath) -> PromptOptions:
        template = self.template(data, path)
        assert template is not None  # the schema requires `template` or `prompt`
        return PromptOptions(
            template=template,
            parameters=self.extraction(data.get("parameters"), (*path, "parameters")),
            clarify=self.clarify(data.get("clarify"), (*path, "clarify")),
            offline=self.offline_reply(data, path),
        )

    def offline_reply(self, data: Mapping[str, Any], path: KeyPath) -> TemplateRef | None:
        """A prompt tool's `offline` (inline) or `offline_template` (a file), or None."""
        if "offline" in data:
            return self.inline(data["offline"], (*path, "offline"))
        return self.file_template(data.get("offline_template"), (*path, "offline_template"))

    def lookup_options(self, data: Mapping[str, Any], path: KeyPath) -> LookupOptions:
        keys = data["key"] if isinstance(data["key"], list) else [data["key"]]
        return LookupOptions(
            table=self.read_path(data["table"], (*path, "table")),
            key=keys[0],
            key_columns=tuple(keys),
            match=data["match"],
            parameter=data.get("parameter"),
            columns=tuple(data["columns"]),
            clarify=self.clarify(data.get("clarify"), (*path, "clarify")),
        )

    @staticmethod
    def retrieve_options(data: Mapping[str, Any], path: KeyPath) -> RetrieveOptions:
        return RetrieveOptions(**_pick(data, "corpus", "top_k", "mode", "rewrite", "excerpts"))

    def search_options(self, data: Mapping[str, Any], path: KeyPath) -> SearchOptions:
        return SearchOptions(
            **_pick(data, "corpus", "top_k", "mode", "rewrite", "max_brute_force_page_count"),
            read_template=self.file_template(data.get("read_template"), (*path, "read_template")),
        )

    @staticmethod
    def neighbor_options(data: Mapping[str, Any], path: KeyPath) -> NeighborSearchOptions:
        return NeighborSearchOptions(**_pick(data, "corpus", "window", "source_tool"))

    def deep_search_options(self, data: Mapping[str, Any], path: KeyPath) -> DeepSearchOptions:
        return DeepSearchOptions(
            **_pick(data, "search_tool", "neighbor_search_tool", "max_missing"),
            missing_template=self.file_template(
                data.get("missing_template"), (*path, "missing_template")
            ),
            compose_template=self.file_template(
                data.get("compose_template"), (*path, "compose_template")
            ),
        )

    def python_options(self, data: Mapping[str, Any], path: KeyPath) -> PythonOptions:
        return PythonOptions(
            reference=data["class"],
            settings=frozen(data["settings"]),
            path=self.optional_read_path(data.get("path"), (*path, "path")),
        )

    def mcp_options(self, data: Mapping[str, Any], path: KeyPath) -> McpOptions:
        return McpOptions(
            server=data["server"],
            tool=data.get("tool", data["name"]),  # the server's tool of the same name
            arguments=frozen(data["arguments"]),
            clarify=self.clarify(data.get("clarify"), (*path, "clarify")),
        )

    def extraction(self, data: Mapping[str, Any] | None, path: KeyPath) -> Extraction | None:
        if data is None:
            return None
        return Extraction(schema=frozen(data["schema"]), template=self.template(data, path))

    def clarify(self, data: Mapping[str, Any] | None, path: KeyPath) -> Clarify | None:
        if data is None:
            return None
        data = filled(data, "clarify")
        return Clarify(
            question=self.inline(data["question"], (*path, "question")),
            required=tuple(data["required"]),
        )

    # --- declarative coordinators ------------------------------------------------------

    def decompose(self, data: Mapping[str, Any], path: KeyPath) -> Decompose:
        data = filled(data, "decompose")
        append = data.get("append_prompt")
        return Decompose(
            extract=self.extraction(data.get("extract"), (*path, "extract")),
            relevant_if=data.get("relevant_if"),
            append_prompt=self.inline(append, (*path, "append_prompt")) if append else None,
            subtasks=tuple(
                self.subtask(spec, (*path, "subtasks", i))
                # `subtasks`, when given, are at least one; a decompose may have none
                for i, spec in enumerate(data.get("subtasks", ()))
            ),
            activate_after_subtasks=data["activate_after_subtasks"],
            parallel=data["parallel"],
        )

    def subtask(self, data: Mapping[str, Any], path: KeyPath) -> SubtaskTemplate:
        data = filled(data, "subtask")
        conditional = data.get("conditional")
        return SubtaskTemplate(
            prompt=self.inline(data["prompt"], (*path, "prompt")),
            name=data.get("name"),
            id=data.get("id"),
            for_each=data.get("for_each"),
            loop_var=data["as"],
            required_tools=tuple(data["required_tools"]),
            condition=self.condition(conditional, (*path, "conditional")) if conditional else None,
            where=self.where(path),
        )

    def condition(self, data: Mapping[str, Any], path: KeyPath) -> Condition:
        if "skip_if_found" in data:
            return Condition(
                ConditionKind.SKIP_IF_FOUND,
                sibling=data["skip_if_found"],
                where=self.where((*path, "skip_if_found")),
            )
        return Condition(
            ConditionKind.EXPRESSION, expression=data["run_if"], where=self.where((*path, "run_if"))
        )


def _pick(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {key: data[key] for key in keys if key in data}
