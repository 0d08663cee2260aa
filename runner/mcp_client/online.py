"""`runner validate --online` and `runner mcp list`: a pipeline's `mcp` tools checked against
what their servers list, which only a started server can say (the offline checks are
runner/config/checks/mcp.py).

    M101  error    a server cannot be started, reached, or list its tools
    M102  error    a tool names a tool its server does not have
    M103  error    a server's tool has an input schema that is not a JSON Schema of an object
    M104  error    a fixed argument the tool's schema does not take, or does not accept
    M105  warning  `clarify.required` names an argument the tool's schema does not have
    M106  error    a corpus's embedding service (`embedding.provider`) cannot embed a short text
    M107  error    a corpus's rerank endpoint (`embedding.rerank: {provider, ...}`) cannot score
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from runner.config.humanize import suggestion_suffix
from runner.config.model import McpOptions, Pipeline, ToolConfig
from runner.documents.diagnostics import Diagnostic, KeyPath, Severity
from runner.mcp_client.replies import ServerTool
from runner.mcp_client.settings import McpError

if TYPE_CHECKING:
    from runner.config import ValidationReport
    from runner.documents.loader import YamlFile


@dataclass
class ServerListing:
    """One server as `runner mcp list` shows it: its tools, or why it could not list them."""

    name: str
    tools: dict[str, ServerTool] = field(default_factory=dict)
    error: str | None = None
    used_by: dict[str, str] = field(default_factory=dict)  # server tool -> pipeline tool


@dataclass
class OnlineReport:
    servers: list[ServerListing]
    diagnostics: list[Diagnostic]

    @property
    def passed(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def check_online(pipeline: Pipeline, document: YamlFile) -> OnlineReport:
    """Start every server the pipeline declares, list its tools, and check the `mcp` tools."""
    from runner.mcp_client import connections

    listings: dict[str, ServerListing] = {}
    diagnostics: list[Diagnostic] = []
    for name, server in pipeline.mcp_servers.items():
        listing = listings[name] = ServerListing(name)
        try:
            listing.tools = connections().tools_now(server)
        except McpError as error:
            listing.error = str(error)
            diagnostics.append(
                document.diagnostic(
                    "M101",
                    str(error),
                    ("mcp_servers", name),
                    hint="run the server's command (or reach its url) by hand to see why",
                    at_key=True,
                )
            )
    for index, tool in enumerate(pipeline.tools):
        if isinstance(tool.options, McpOptions):
            listed = listings.get(tool.options.server)
            if listed is not None and listed.error is None:
                diagnostics.extend(_tool(document, ("tools", index), tool, listed))
    return OnlineReport(list(listings.values()), diagnostics)


def _tool(
    document: YamlFile, path: KeyPath, tool: ToolConfig, listing: ServerListing
) -> list[Diagnostic]:
    assert isinstance(tool.options, McpOptions)
    options = tool.options
    listed = listing.tools.get(options.tool)
    written = document.data["tools"][path[-1]]
    where = (*path, "tool") if "tool" in written else (*path, "name")
    if listed is None:
        known = sorted(listing.tools)
        return [
            document.diagnostic(
                "M102",
                f"the MCP server `{listing.name}` has no tool `{options.tool}`"
                + suggestion_suffix(options.tool, known),
                where,
                hint=f"its tools: {', '.join(known) or 'none'}",
            )
        ]
    listing.used_by[listed.name] = tool.name
    problem = _schema_problem(listed.input_schema)
    if problem is not None:
        return [
            document.diagnostic(
                "M103",
                f"the input schema of `{listed.name}` on `{listing.name}` {problem}",
                where,
                hint="the server must be fixed: runner extracts the arguments by that schema",
            )
        ]
    found = _arguments(document, path, options.arguments, listed)
    properties = listed.input_schema.get("properties") or {}
    clarify = options.clarify
    for index, name in enumerate(clarify.required if clarify else ()):
        if name not in properties:
            found.append(
                document.diagnostic(
                    "M105",
                    f"clarify.required names `{name}`, which `{listed.name}` does not take"
                    + suggestion_suffix(name, properties),
                    (*path, "clarify", "required", index),
                    hint=f"its arguments: {', '.join(properties) or 'none'}",
                    severity=Severity.WARNING,
                )
            )
    return found


def _arguments(
    document: YamlFile, path: KeyPath, fixed: Mapping[str, Any], listed: ServerTool
) -> list[Diagnostic]:
    from jsonschema import Draft202012Validator

    properties = listed.input_schema.get("properties") or {}
    found = []
    for name, value in fixed.items():
        place = (*path, "arguments", name)
        if name not in properties:
            found.append(
                document.diagnostic(
                    "M104",
                    f"`{listed.name}` takes no argument `{name}`"
                    + suggestion_suffix(name, properties),
                    place,
                    hint=f"its arguments: {', '.join(properties) or 'none'}",
                    at_key=True,
                )
            )
            continue
        # a fixed value is a FrozenDict / FrozenList: a dict and a list to jsonschema
        error = next(Draft202012Validator(properties[name]).iter_errors(value), None)
        if error is not None:
            found.append(
                document.diagnostic(
                    "M104",
                    f"`{listed.name}` does not take {value!r} as `{name}`: {error.message}",
                    place,
                    hint=f"its schema for `{name}`: {properties[name]}",
                )
            )
    return found


def _schema_problem(schema: Mapping[str, Any]) -> str | None:
    from runner.config.schema import metaschema_validator

    error = next(metaschema_validator().iter_errors(dict(schema)), None)
    if error is not None:
        return f"is not a valid JSON Schema: {error.message}"
    if schema.get("type") != "object":
        return "does not describe an object (`type: object`)"
    return None


def with_online_checks(reports: Sequence[ValidationReport]) -> list[ValidationReport]:
    """`runner validate --online`: each valid report with its file's online diagnostics."""
    from runner.config import load_pipeline
    from runner.documents.diagnostics import sort_diagnostics
    from runner.documents.loader import read_document

    checked = []
    for report in reports:
        if report.errors:
            checked.append(report)
            continue
        pipeline = load_pipeline(report.path)
        services = any(
            corpus.embedding is not None
            and (corpus.embedding.provider is not None or corpus.embedding.reranker is not None)
            for corpus in pipeline.corpora.values()
        )
        if not pipeline.mcp_servers and not services:
            checked.append(report)
            continue
        document = read_document(report.path)
        found = [*check_online(pipeline, document).diagnostics]
        found += embedding_services(pipeline, document)
        diagnostics = tuple(sort_diagnostics([*report.diagnostics, *found]))
        checked.append(replace(report, diagnostics=diagnostics))
    return checked


ONLINE_TIMEOUT_S = 10.0  # a service's wait at most while validating
# M106's fix, by provider
_SERVICE_HINTS = {
    "openai_like": "start the service (llama.cpp's server needs --embedding), check `api_base` "
    "(the part before /embeddings) and that it serves `model`",
    "ollama": "start Ollama (`ollama serve`) and pull the model (`ollama pull MODEL`); "
    "`api_base` is the server's address, without /api or /v1 (http://127.0.0.1:11434)",
    "llama_index": "install the class's package, check `embedding.options` against the class's "
    "documentation, and that the service it calls is up",
}


def embedding_services(pipeline: Pipeline, document: YamlFile) -> list[Diagnostic]:
    """Each corpus's embedding service asked to embed one short text (M106 when it cannot), and
    its rerank endpoint to score one (M107)."""
    from runner.embedding.remote import EmbeddingServiceError, spec_from
    from runner.embedding.rerank_service import RerankServiceError, RerankSpec, scores
    from runner.embedding.services import embedder_for

    found = []
    for name, corpus in pipeline.corpora.items():
        embedding = corpus.embedding
        where = ("corpora", name, "embedding")
        if embedding is not None and embedding.provider is not None:
            spec = spec_from(embedding)
            try:
                embedder = embedder_for(spec, min(spec.timeout_s, ONLINE_TIMEOUT_S))
                embedder.embed(["runner validate --online"])
            except EmbeddingServiceError as error:
                hint = _SERVICE_HINTS.get(embedding.provider, _SERVICE_HINTS["openai_like"])
                found.append(document.diagnostic("M106", str(error), where, hint=hint, at_key=True))
        if embedding is not None and embedding.reranker is not None:
            rerank = RerankSpec.of(embedding.reranker)
            bounded = replace(rerank, timeout_s=min(rerank.timeout_s, ONLINE_TIMEOUT_S))
            try:
                scores(bounded, "runner validate --online", ["runner validate --online"])
            except RerankServiceError as error:
                found.append(
                    document.diagnostic(
                        "M107",
                        str(error),
                        (*where, "rerank"),
                        hint="start the rerank service, check `api_base` (the part before "
                        "/rerank), that `provider` is its request shape (tei or cohere_like) "
                        "and that it serves `model`",
                        at_key=True,
                    )
                )
    return found
