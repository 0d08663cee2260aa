"""The typed, immutable model of a validated pipeline file.

This is the only shape the rest of runner reads: the engine, the tools, the LLM layer and the
retrieval layer never see raw YAML. `runner.config.build` turns a file that passed the schema and
the semantic checks into these objects; every object that an error may need to point at carries
its `where` (file, line, column).

Sequences are tuples and nested mappings are read-only so that a loaded pipeline can be shared by
concurrent rounds without anyone changing it under them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from runner.config.corpus_files import DEFAULT_INCLUDE


@dataclass(frozen=True)
class Where:
    """A place in a pipeline file, 1-based like an editor shows it."""

    file: Path
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class ToolKind(str, Enum):
    PROMPT = "prompt"
    LOOKUP = "lookup"
    RETRIEVE = "retrieve"
    SEARCH = "search"
    NEIGHBOR_SEARCH = "neighbor_search"
    DEEP_SEARCH = "deep_search"
    PYTHON = "python"
    MCP = "mcp"


class ActivationMode(str, Enum):
    SUITABILITY = "suitability"  # the LLM answers the tool's yes/no instruction
    COORDINATOR_ONLY = "coordinator_only"  # C15a: only forced by required_tool_names
    ALWAYS = "always"
    RULE = "rule"  # keywords and/or pattern, no LLM


class Output(str, Enum):
    CONTEXT = "context"
    GUARANTEED = "guaranteed"  # C23: handed to the final answer as it is
    ANSWER = "answer"  # C25: a terminal answer ends the round


@dataclass(frozen=True)
class TemplateRef:
    """A Jinja template given either as a file (relative to the pipeline) or inline text."""

    path: Path | None = None
    inline: str | None = None
    where: Where | None = None

    def source(self) -> str:
        if self.inline is not None:
            return self.inline
        assert self.path is not None
        return self.path.read_text(encoding="utf-8")

    @property
    def name(self) -> str:
        """A name for error messages and the Jinja loader."""
        return str(self.path) if self.path is not None else "<inline>"


@dataclass(frozen=True)
class Activation:
    """When a tool runs: its activation mode and that mode's settings."""

    mode: ActivationMode = ActivationMode.SUITABILITY
    keywords: tuple[str, ...] = ()  # RULE: any of these words (case-insensitive, whole word)
    pattern: str | None = None  # RULE: a regular expression searched in the task prompt


@dataclass(frozen=True)
class Clarify:
    """C24: the question a tool asks when a required parameter is missing."""

    question: TemplateRef
    # Which parameters must be present; empty means the extraction schema's `required`.
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extraction:
    """Structured parameters taken from the task text (purpose `extract` or `decompose`)."""

    schema: Mapping[str, Any]
    template: TemplateRef | None = None  # overrides the purpose's default template


class ConditionKind(str, Enum):
    SKIP_IF_FOUND = "skip_if_found"  # typed shorthand: skip when a sibling found anything
    EXPRESSION = "expression"  # a sandboxed Jinja expression that yields true to RUN


@dataclass(frozen=True)
class Condition:
    """C16: when a conditional subtask runs.

    SKIP_IF_FOUND names an earlier subtask template (`sibling`) of the same decomposition; the
    subtask is skipped when a sibling made from that template (the one made from the same
    `for_each` item, when both loop) produced non-empty context.
    EXPRESSION is evaluated with `parent`, `subtask`, `completed_so_far`, `found(prefix)` and the
    loop variables saved when the subtask was made; true means RUN.
    """

    kind: ConditionKind
    sibling: str | None = None
    expression: str | None = None
    where: Where | None = None


@dataclass(frozen=True)
class SubtaskTemplate:
    """One kind of subtask a declarative coordinator makes (`decompose.subtasks`)."""

    prompt: TemplateRef  # the subtask's own self-contained task_prompt (Jinja)
    name: str | None = None  # lets conditional rules of later templates refer to this one
    id: str | None = None  # Jinja; default "<parent task_no>.<running index>"
    for_each: str | None = None  # Jinja expression yielding a list; one subtask per item
    loop_var: str = "item"
    required_tools: tuple[str, ...] = ()  # C13: forced, exclusive activation
    condition: Condition | None = None  # C16: makes the subtask conditional
    where: Where | None = None


@dataclass(frozen=True)
class Decompose:
    """A declarative coordinator (C1–C3, C16, C20e)."""

    extract: Extraction | None = None  # purpose `decompose`; no extraction means params = {}
    # Jinja expression over `params` and `task`; default: the extracted params are non-empty
    relevant_if: str | None = None
    append_prompt: TemplateRef | None = None  # C2: text appended to task_prompt
    subtasks: tuple[SubtaskTemplate, ...] = ()
    activate_after_subtasks: bool = False  # C20e: the coordinator then runs on the parent itself
    parallel: bool = False  # opt-in: independent siblings run concurrently, observable order kept


@dataclass(frozen=True)
class ToolConfig:
    """What every tool kind may carry. Kind-specific settings live in `options`' typed class."""

    name: str
    kind: ToolKind
    description: str = ""
    priority: int = 100  # lower runs earlier
    activation: Activation = field(default_factory=Activation)
    instruction: str = ""  # the yes/no activation question
    examples: tuple[str, ...] = ()  # example questions the tool is for (suitability hints)
    consumes_context: bool = False  # C20c
    output: Output = Output.CONTEXT
    coordinator_output: Output | None = None  # C23: the output when a coordinator asked
    decompose: Decompose | None = None  # makes the tool a coordinator
    prompt_types: tuple[str, ...] = ()  # empty: the tool is active for every prompt type
    options: KindOptions | None = None
    where: Where | None = None

    @property
    def is_coordinator(self) -> bool:
        return self.decompose is not None or self.kind is ToolKind.DEEP_SEARCH


# --- kind-specific options ---------------------------------------------------------------


@dataclass(frozen=True)
class PromptOptions:
    """A `prompt` tool's settings: its template, parameters and clarifying question."""

    template: TemplateRef
    parameters: Extraction | None = None  # purpose `extract`
    clarify: Clarify | None = None
    # `offline` / `offline_template`: the reply when no model answers the tool (runner.tools.
    # prompt); None: its result says it needs a model and the round is degraded
    offline: TemplateRef | None = None


@dataclass(frozen=True)
class LookupOptions:
    """A `lookup` tool's settings: its table and how a row is matched."""

    table: Path  # CSV, YAML or JSON rows
    key: str  # the column matched (the first of `key_columns`; a row's name in sources)
    match: str = "text"  # "text": key values found in the text; "params": extracted parameter
    parameter: str | None = None  # with match=params: the parameter holding the key
    columns: tuple[str, ...] = ()  # columns shown in the context; empty: all
    clarify: Clarify | None = None  # asked when no key is found
    key_columns: tuple[str, ...] = ()  # `key: [a, b]`: every column that names a row

    @property
    def matched_columns(self) -> tuple[str, ...]:
        return self.key_columns or (self.key,)


@dataclass(frozen=True)
class RetrieveOptions:
    """A `retrieve` tool's settings: the corpus it searches and how."""

    corpus: str
    top_k: int = 4
    mode: str = "keyword"  # keyword | vector | hybrid
    rewrite: bool = False  # purpose `rewrite` restates the query first (a real model only)
    excerpts: bool = False  # the pages cut to the units that bear on the task (retrieval.excerpts)


@dataclass(frozen=True)
class SearchOptions:
    """A `search` tool's settings (a deep search's searches over a corpus)."""

    corpus: str
    top_k: int = 8
    mode: str = "keyword"  # keyword | vector | hybrid
    rewrite: bool = False  # purpose `rewrite` restates the query first (a real model only)
    max_brute_force_page_count: int | None = None  # C31
    read_template: TemplateRef | None = None  # purpose `read_page`


@dataclass(frozen=True)
class NeighborSearchOptions:
    """A `neighbor_search` tool's settings: the pages around found ones."""

    corpus: str
    window: int = 1
    source_tool: str | None = None  # whose pages to look around; default: the retrieval tool


@dataclass(frozen=True)
class DeepSearchOptions:
    """A `deep_search` tool's settings: the tools it searches with, its limits."""

    search_tool: str  # C29: required
    neighbor_search_tool: str | None = None
    max_missing: int = 3
    missing_template: TemplateRef | None = None  # purpose `missing_info`
    compose_template: TemplateRef | None = None  # purpose `compose`


@dataclass(frozen=True)
class PythonOptions:
    """A `python` tool's settings: the class it runs, and its settings."""

    reference: str  # "module:Class"; never imported by validate
    settings: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None  # a folder (relative to the pipeline) put on sys.path


@dataclass(frozen=True)
class McpOptions:
    """An `mcp` tool's settings: the server's tool it calls, with which arguments."""

    server: str  # a key of `mcp_servers`
    tool: str  # the server's tool, as the server names it
    arguments: Mapping[str, Any] = field(default_factory=dict)  # fixed, never extracted
    clarify: Clarify | None = None  # asked when a required argument is missing


KindOptions = (
    PromptOptions
    | LookupOptions
    | RetrieveOptions
    | SearchOptions
    | NeighborSearchOptions
    | DeepSearchOptions
    | PythonOptions
    | McpOptions
)


# --- domain-wide settings ----------------------------------------------------------------


@dataclass(frozen=True)
class ScriptRule:
    """One rule of the scripted provider; the first matching rule answers."""

    reply: Any  # text, or a mapping sent as JSON
    purpose: str | None = None
    tool: str | None = None
    task: str | None = None  # regex searched in the task text (the request's subject)
    prompt: str | None = None  # regex searched in the rendered prompt
    times: int | None = None  # how many times the rule may answer; None: unlimited
    where: Where | None = None


@dataclass(frozen=True)
class ModelSettings:
    """Settings a purpose or a tool may give the model instead of `llm:`'s."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    structured: str | None = None  # json_schema | json_object | prompt (see docs/llm.md)
    context_window: int | None = None  # the model's window in tokens; None: as reported


@dataclass(frozen=True)
class LLMConfig:
    """The pipeline's `llm:` block: the provider, the model and how to call it."""

    provider: str = "offline"  # offline | scripted | replay | openai_like | ollama | llama_index
    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None  # the NAME of the environment variable holding the key
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 60.0
    max_retries: int = 3
    concurrency: int = 4
    structured_retries: int = 1
    cache: bool = False
    cache_path: Path | None = None
    cassette: Path | None = None  # replay
    script: tuple[ScriptRule, ...] = ()  # scripted
    script_file: Path | None = None  # scripted rules in a separate file
    fallback: str | None = None  # scripted: "offline" answers what no rule matches
    purposes: Mapping[str, ModelSettings] = field(default_factory=dict)
    templates: Mapping[str, TemplateRef] = field(default_factory=dict)  # per-purpose overrides
    structured: str = "json_schema"  # how a reply schema reaches the server: docs/llm.md
    context_window: int | None = None  # tokens; None: what the provider reports, else 8192
    llm_class: str | None = None  # llama_index: `class:`, e.g. llama_index.llms.groq.Groq
    options: Mapping[str, Any] = field(default_factory=dict)  # llama_index: the class's options
    # openai_like, ollama: request-body sampling fields as the server names them (repeat_penalty)
    sampling: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PromptType:
    """One prompt type of `prompt_types.types`: how a task is recognised as one."""

    name: str
    description: str = ""
    keywords: tuple[str, ...] = ()
    pattern: str | None = None


@dataclass(frozen=True)
class PromptTypes:
    """The pipeline's `prompt_types:`: the types, the default and how to classify."""

    default: str = "question"
    classify: str = "rule"  # rule | llm
    types: tuple[PromptType, ...] = (PromptType("question"),)


DEFAULT_RERANK = 20  # `embedding.rerank`'s default: docs/retrieval.md has the measurements


@dataclass(frozen=True)
class Embedding:
    """The embedding model of a corpus's vector / hybrid search: a model runner carries
    (`all-MiniLM-L6-v2`), or (already resolved against the pipeline's folder) a folder holding
    one."""

    model: str
    # a vector or hybrid search's first candidates (one page a section) reordered by how the
    # question's words match theirs (runner/retrieval/rerank.py); 0 turns it off
    rerank: int = DEFAULT_RERANK
    # a service that embeds instead (runner/embedding/remote.py): `provider` (openai_like), its
    # `api_base`, and the environment variable of its key; `model` is then the service's name
    provider: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    # the service's further keys as written (`class`, `options`, `timeout_s`, `batch_size`,
    # `max_chars`): runner/embedding/remote.py reads them, with their defaults
    settings: Mapping[str, Any] = field(default_factory=dict)
    # `rerank` written as a mapping: the rerank endpoint that reorders the first `rerank`
    # candidates instead (runner/embedding/rerank_service.py reads it)
    reranker: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Corpus:
    """A corpus of `corpora:`: its folder, the files chosen and how they are paged."""

    name: str
    path: Path
    include: tuple[str, ...] = DEFAULT_INCLUDE  # every file of a format runner reads
    max_words: int = 250
    exclude: tuple[str, ...] = ()  # globs of files left out, though `include` matches them
    navigation: str = "exclude"  # navigation pages (TOCs, indexes): exclude | keep in answers
    # the site's own bars in its HTML pages, CSS selectors (`html.drop`), dropped with the
    # furniture runner drops by default (runner/retrieval/readers/furniture.py)
    html_drop: tuple[str, ...] = ()
    embedding: Embedding | None = None  # None: the default model, when a tool needs vectors
    # users' words -> the documents' words, added to a query that uses them (`synonyms:`)
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # documents may be symlinks that lead outside the pipeline's folder (runner/config/paths.py)
    follow_symlinks: bool = False
    # `path` names a folder outside the pipeline's (absolute or `~`): documents stay in it
    outside: bool = False


# `${NAME}` in an MCP server's `env` and `headers` values: runner's environment variable NAME
ENV_REFERENCE = re.compile(r"\$\{([^}]*)\}")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class McpServer:
    """An MCP server `mcp` tools call: a program over stdio (`command`) or an HTTP endpoint
    (`url`). `env` and `headers` values may hold `${NAME}`, read from runner's environment when
    the server starts, so that no secret is written in the file."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0  # each call
    start_timeout_s: float = 30.0  # the start (a stdio program) or the first connection
    folder: Path | None = None  # where a stdio server runs: the pipeline's folder


@dataclass(frozen=True)
class Gatekeeper:
    """The deep fallback's gatekeeper: whether the context found is enough."""

    mode: str = "llm"  # llm | rule
    min_coverage: float = 0.6  # rule: share of important words the context must cover
    template: TemplateRef | None = None


@dataclass(frozen=True)
class DeepFallback:
    """The pipeline's `deep_fallback:`: its coordinator, types and gatekeeper."""

    coordinator: str
    prompt_types: tuple[str, ...] = ()  # types that have the fallback; others: none (C28)
    gatekeeper: Gatekeeper = field(default_factory=Gatekeeper)


@dataclass(frozen=True)
class AnswerConfig:
    """The pipeline's `answer:` block: the answer's template and context size."""

    template: TemplateRef | None = None  # purpose `answer`; default templates/answer.j2
    max_context_items: int = 12


@dataclass(frozen=True)
class Limits:
    """The pipeline's `limits:`: depth, subtasks and clarification rounds."""

    max_depth: int = 4  # C4; the root is depth 0
    max_subtasks: int = 12
    max_clarification_rounds: int = 3  # C24


@dataclass(frozen=True)
class Pipeline:
    """A validated pipeline file: everything a round needs, typed."""

    path: Path  # the pipeline file
    domain: str
    tools: tuple[ToolConfig, ...]
    version: int = 1
    description: str = ""
    llm: LLMConfig = field(default_factory=LLMConfig)
    prompt_types: PromptTypes = field(default_factory=PromptTypes)
    corpora: Mapping[str, Corpus] = field(default_factory=dict)
    mcp_servers: Mapping[str, McpServer] = field(default_factory=dict)
    retrieval_tool: str | None = None
    deep_fallback: DeepFallback | None = None
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    limits: Limits = field(default_factory=Limits)
    state_dir: Path | None = None  # default: <pipeline folder>/.runner
    content_hash: str = ""  # sha256 of the file; sessions detect a changed pipeline with it

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def state_folder(self) -> Path:
        return self.state_dir if self.state_dir is not None else self.folder / ".runner"

    def find_tool(self, name: str) -> ToolConfig | None:
        """C15: a tool by its simple or its domain-prefixed name."""
        prefix = f"{self.domain}."
        simple = name[len(prefix) :] if name.startswith(prefix) else name
        return next((tool for tool in self.tools if tool.name == simple), None)
