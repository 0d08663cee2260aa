"""The purposes of LLM calls and the variables each purpose's template receives.

A leaf module (it imports nothing of runner) because both sides of the house need it: the LLM
layer renders and accounts calls by purpose, and `runner validate` (runner.config) reports a
template override that uses a variable it will never receive. It is the contract between the
templates in `templates/`, a pipeline's overrides (`llm.templates`), the offline provider
(which reads the same variables as `LLMRequest.facts`) and validation.
"""

from __future__ import annotations

from enum import Enum


class Purpose(str, Enum):
    PROMPT_TYPE = "prompt_type"
    SUITABILITY = "suitability"
    DECOMPOSE = "decompose"
    EXTRACT = "extract"
    TOOL = "tool"
    GATEKEEPER = "gatekeeper"
    MISSING_INFO = "missing_info"
    READ_PAGE = "read_page"
    REWRITE = "rewrite"
    COMPOSE = "compose"
    ANSWER = "answer"


PURPOSE_VARIABLES: dict[Purpose, frozenset[str]] = {
    # text: the task prompt; types: [{name, description}]
    Purpose.PROMPT_TYPE: frozenset({"text", "types"}),
    # tools: [{name, instruction, description, examples, keywords}] — every candidate in one call
    Purpose.SUITABILITY: frozenset({"text", "tools"}),
    # schema: the JSON Schema of the parameters; known_values: values of the pipeline's tables,
    # {<lookup parameter or key column>: [values]}; named_values: those the text names
    Purpose.DECOMPOSE: frozenset(
        {"text", "schema", "tool", "instruction", "known_values", "named_values"}
    ),
    Purpose.EXTRACT: frozenset(
        {"text", "schema", "tool", "instruction", "known_values", "named_values"}
    ),
    # a prompt tool renders its own template (see docs/reference.md for its variables)
    Purpose.TOOL: frozenset({"text"}),
    # passages: [{text, sources, key, guaranteed}]
    Purpose.GATEKEEPER: frozenset({"question", "passages"}),
    Purpose.MISSING_INFO: frozenset({"question", "passages", "max_missing"}),
    Purpose.READ_PAGE: frozenset({"question", "page"}),
    # corpus: the name of the corpus about to be searched
    Purpose.REWRITE: frozenset({"question", "corpus"}),
    Purpose.COMPOSE: frozenset({"question", "answers"}),
    Purpose.ANSWER: frozenset({"question", "guaranteed", "context"}),
}

# What a `prompt` tool's own template receives.
PROMPT_TOOL_VARIABLES = frozenset(
    {
        "text",  # the execution text (C21): prompt_context + marker + task_prompt
        "task",  # the task prompt alone
        "original",  # extract_coordinator_original(text): the parent's text (C22)
        "coordinator_requested",  # whether a coordinator asked for this run (C22)
        "params",  # the extracted parameters (empty mapping without `parameters`)
        "context",  # passages of the context buffer (consumers only; else empty)
        "clarification",  # {question, answer} when continuing a clarification (C24), else none
        "tool",
        "domain",
        "lookup",  # lookup(tool, key): a lookup tool's rows for a key, a direct call (C26)
    }
)

# What the templates and expressions of a `decompose` block receive.
DECOMPOSE_VARIABLES = frozenset({"params", "task", "index"})  # plus the loop variable
CONDITION_VARIABLES = frozenset({"parent", "subtask", "completed_so_far", "found"})  # + loop vars
CLARIFY_VARIABLES = frozenset({"params", "missing", "task", "tool"})
