"""The typed model (runner.config.model) and the pipeline schema name the same keys with the same
defaults: the schema states each key once, and a dataclass that drifts from it fails here.

Each dataclass is paired with the schema object it models. A field is the key of the same name
unless RENAMED says otherwise; a field runner works out itself (where an object is written, the
tool kind's options, a path made absolute) is listed in NOT_KEYS, a key no field holds in
NOT_FIELDS. Adding a key with the same name to the schema and to its dataclass needs nothing
here."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import Any

import pytest

from runner.config import model
from runner.config.keys import key_schema, resolved

# dataclass -> (where its keys are in the schema: a `$defs` name or `pipeline`, then keys)
SCHEMA_OF: dict[type, tuple[str, ...]] = {
    model.Pipeline: ("pipeline",),
    model.LLMConfig: ("llm",),
    model.ModelSettings: ("model_settings",),
    model.ScriptRule: ("script_rule",),
    model.PromptTypes: ("prompt_types",),
    model.PromptType: ("prompt_type",),
    model.Corpus: ("corpus",),
    model.Embedding: ("corpus", "embedding"),
    model.McpServer: ("mcp_server",),
    model.Gatekeeper: ("gatekeeper",),
    model.DeepFallback: ("deep_fallback",),
    model.AnswerConfig: ("answer",),
    model.Limits: ("limits",),
    model.ToolConfig: ("tool",),
    model.Activation: ("activation_rule",),
    model.PromptOptions: ("prompt_tool",),
    model.LookupOptions: ("lookup_tool",),
    model.RetrieveOptions: ("retrieve_tool",),
    model.SearchOptions: ("search_tool",),
    model.NeighborSearchOptions: ("neighbor_search_tool",),
    model.DeepSearchOptions: ("deep_search_tool",),
    model.PythonOptions: ("python_tool",),
    model.McpOptions: ("mcp_tool",),
    model.Extraction: ("extraction",),
    model.Clarify: ("clarify",),
    model.Decompose: ("decompose",),
    model.SubtaskTemplate: ("subtask",),
    model.Condition: ("condition",),
}
# (dataclass, field) -> the key it holds, a path below the dataclass's object; a pair of keys
# of which the file gives one (`template` / `prompt`) is held by one field
RENAMED: dict[tuple[type, str], tuple[tuple[str, ...], ...]] = {
    (model.LLMConfig, "llm_class"): (("class",),),
    (model.Corpus, "max_words"): (("pages", "max_words"),),
    (model.Corpus, "navigation"): (("pages", "navigation"),),
    (model.Corpus, "html_drop"): (("html", "drop"),),
    (model.Gatekeeper, "template"): (("template",), ("prompt",)),
    (model.AnswerConfig, "template"): (("template",), ("prompt",)),
    (model.PromptOptions, "template"): (("template",), ("prompt",)),
    (model.PromptOptions, "offline"): (("offline",), ("offline_template",)),
    (model.Extraction, "template"): (("template",), ("prompt",)),
    (model.PythonOptions, "reference"): (("class",),),
    (model.SubtaskTemplate, "loop_var"): (("as",),),
    (model.SubtaskTemplate, "condition"): (("conditional",),),
    (model.Condition, "sibling"): (("skip_if_found",),),
    (model.Condition, "expression"): (("run_if",),),
    # a service's own keys, as one mapping the embedding provider reads
    (model.Embedding, "settings"): tuple(
        (key,) for key in ("class", "options", "timeout_s", "batch_size", "max_chars")
    ),
    (model.Embedding, "reranker"): (("rerank",),),  # `rerank` when it names an endpoint
}
# fields that hold their keys as one mapping, filled with those keys' own defaults (so the
# field's empty default is no statement of a default)
BUNDLES = {(model.Embedding, "settings"), (model.Embedding, "reranker")}
# fields runner works out, and which no key of the file holds
NOT_KEYS = {
    (model.Pipeline, "path"),  # the file itself
    (model.Pipeline, "content_hash"),
    (model.LLMConfig, "cache_path"),  # from `cache: {path: ...}`
    (model.PromptType, "name"),  # its key in `types`
    (model.Corpus, "name"),  # its key in `corpora`
    (model.Corpus, "outside"),  # whether `path` leaves the pipeline's folder
    (model.McpServer, "name"),  # its key in `mcp_servers`
    (model.McpServer, "folder"),  # the pipeline's folder
    (model.ToolConfig, "options"),  # the kind's own keys (the *Options classes)
    (model.Activation, "mode"),  # a rule; the other modes are texts
    (model.LookupOptions, "key_columns"),  # `key`, as a list
    (model.Condition, "kind"),  # which of the two keys is given
}
# keys no field holds
NOT_FIELDS = {
    ("llm", "api_key"),  # refused: a key is never written in the file
}
# defaults of a block the file leaves out, which its keys' defaults do not state
BLOCK_DEFAULTS = {
    (model.PromptTypes, "default"),  # without `prompt_types`: one type, `question`
    (model.PromptTypes, "types"),
}


def keys_of(place: tuple[str, ...]) -> dict[str, Mapping[str, Any]]:
    """The keys of a schema object, its `oneOf` mapping for a text-or-mapping."""
    node = key_schema(*place)
    if "properties" not in node:
        node = next(resolved(b) for b in node["oneOf"] if b.get("type") == "object")
    return {key: resolved(spec) for key, spec in node["properties"].items()}


def key_paths(cls: type, name: str) -> tuple[tuple[str, ...], ...]:
    return RENAMED.get((cls, name), ((name,),))


def spec_at(cls: type, path: tuple[str, ...]) -> Mapping[str, Any] | None:
    return keys_of((*SCHEMA_OF[cls], *path[:-1])).get(path[-1])


def schema_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [
        each
        for each in dataclasses.fields(cls)
        if each.name != "where" and (cls, each.name) not in NOT_KEYS
    ]


def field_default(each: dataclasses.Field[Any]) -> Any:
    if each.default is not dataclasses.MISSING:
        return each.default
    if each.default_factory is not dataclasses.MISSING:
        return each.default_factory()
    return dataclasses.MISSING


def as_json(value: Any) -> Any:
    """A model value as the schema writes it: a tuple as a list, an enum as its value."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [as_json(item) for item in value]
    if isinstance(value, Mapping):
        return {key: as_json(item) for key, item in value.items()}
    return value


CLASSES = sorted(SCHEMA_OF, key=lambda cls: cls.__name__)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_field_of_the_model_is_a_key_of_the_schema(cls: type) -> None:
    missing = [
        (each.name, path)
        for each in schema_fields(cls)
        for path in key_paths(cls, each.name)
        if spec_at(cls, path) is None
    ]
    assert missing == [], f"{cls.__name__}: fields whose key the schema lacks"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_key_of_the_schema_is_a_field_of_the_model(cls: type) -> None:
    held = {path for each in schema_fields(cls) for path in key_paths(cls, each.name)}
    place = SCHEMA_OF[cls]
    modelled = {other for other in SCHEMA_OF.values() if other[: len(place)] == place}
    unheld = []
    for key in keys_of(place):
        if (key,) in held or (*place, key) in modelled or (*place, key) in NOT_FIELDS:
            continue
        if not any(path[0] == key for path in held):
            unheld.append(key)
        else:  # a block the model flattens (`pages.max_words` is `max_words`)
            unheld += [f"{key}.{sub}" for sub in keys_of((*place, key)) if (key, sub) not in held]
    assert unheld == [], f"{cls.__name__}: schema keys no field holds"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_default_of_the_model_is_the_schema_s(cls: type) -> None:
    wrong = []
    for each in schema_fields(cls):
        value = field_default(each)
        if value is dataclasses.MISSING or dataclasses.is_dataclass(value):
            continue  # a required field; a nested block (checked as its own class)
        if (cls, each.name) in BUNDLES:
            continue
        for path in key_paths(cls, each.name):
            spec = spec_at(cls, path) or {}
            if "default" in spec:
                if as_json(value) != spec["default"]:
                    wrong.append((each.name, as_json(value), spec["default"]))
            elif value not in (None, (), {}) and (cls, each.name) not in BLOCK_DEFAULTS:
                wrong.append((each.name, as_json(value), "no default in the schema"))
    assert wrong == [], f"{cls.__name__}: (field, model default, schema default)"


def test_a_default_the_model_changes_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above is no formality: a dataclass default unlike the schema's fails it."""
    changed = dataclasses.make_dataclass(
        "Limits", [("max_depth", int, dataclasses.field(default=5))]
    )
    monkeypatch.setitem(SCHEMA_OF, changed, ("limits",))
    with pytest.raises(AssertionError, match="max_depth"):
        test_every_default_of_the_model_is_the_schema_s(changed)
