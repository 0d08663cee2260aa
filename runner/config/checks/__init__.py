"""The checks the schema cannot express, run once a file has passed the schema.

One module per family, each check a small function with stable `R1xx` codes (the table is in
docs/validate.md):

    names.py         tool names, tool references, prompt types      R101–R103, R105
    activation.py    coordinator_only tools, deep-search tools       R104, R118
    corpora.py       corpora: documents, links, synonyms, models     R106, R122, R124, R132–R134
    paths.py         paths inside the pipeline's folder              R107, R108, R123–R125
    templates.py     templates and expressions                       R109–R112
    extraction.py    extraction schemas, clarification parameters    R113, R119, R135
    tables.py        lookup tables and their columns                 R120
    tools.py         each tool's settings by kind, python references R115
    coordinators.py  declarative coordinators and subtask templates  R116, R117
    parameters.py    parameters an extraction may leave out          R126
    domain.py        domain-wide templates, regexes, script files    R114, R121
    mcp.py           MCP servers and the `mcp` tools that call them  R128–R131

Shared paths and rules live outside this package so the model builder and the run time apply
the very same ones: runner/config/paths.py (containment once symlinks are followed) and
runner/config/defaults.py (defaults that depend on another part of the file, C30). context.py
is what every family shares, including how a later check skips what an earlier one reported.
Nothing here imports or runs pipeline code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.config.checks import (
    activation,
    coordinators,
    corpora,
    domain,
    mcp,
    names,
    parameters,
    tools,
)
from runner.config.checks.context import Checks
from runner.documents.diagnostics import Diagnostic
from runner.documents.loader import YamlFile

# In this order: a later family may rely on what an earlier one reported (see context.py).
FAMILIES: tuple[Callable[[Checks], None], ...] = (
    names.duplicate_tools,
    names.tool_references,
    activation.coordinator_only_tools,
    activation.search_tools_hidden,
    activation.deep_search_unnamed,
    names.prompt_type_names,
    corpora.corpora,
    mcp.mcp_servers,
    tools.tool_settings,
    coordinators.decompositions,
    parameters.unrequired_parameters,
    domain.domain_templates,
    domain.regexes,
    domain.script_file,
)


def check(document: YamlFile, named: dict[Path, bool] | None = None) -> list[Diagnostic]:
    """Every semantic diagnostic of a document that passed the schema; `named` gains every
    path the checks looked at (see Checks.named)."""
    checks = Checks(document)
    for family in FAMILIES:
        family(checks)
    if named is not None:
        named.update(checks.named)
    return checks.diagnostics
