"""Execution texts held as links, joined when read (C20a, C21).

A subtask's prompt_context is its parent's execution text, and that text is the parent's own
prompt_context, the marker and the parent's task_prompt: in a chain, level d's text holds all d
prompts above it. Held as one string a level, a chain of 10,000 levels holds 2 GB of text, and
making it costs more than everything else the engine does. So the engine holds each execution
text as a `LinkedText` — the text above (another link, or a string) and one prompt — made in
O(1), and a tool, a buffer entry's reader or the session's JSON gets the string when it reads it.
(A short text above is simply copied: `LINK_FROM_CHARS`.)

Joining walks up only to the nearest link whose string is known. The links of a path share one
cell holding the longest string joined along it, which starts with each of their texts: a
level's string is then a slice of it, and a walk down a chain (top first) grows that one string
instead of keeping one a level. `RequiredText` lets a class hold a link where a dataclass has a
`str` field, and read it as the `str` (results.LinkedPromptAndContext).
"""

from __future__ import annotations

from typing import Any, overload

from runner.engine.marker import AGENT_COORDINATOR_MARKER

MARKER_LENGTH = len(AGENT_COORDINATOR_MARKER)


class LinkedText:
    """C21: `above` + marker + `prompt` (`above` being the prompt_context); `str()` joins it."""

    __slots__ = ("above", "cell", "length", "prompt")
    above: str | LinkedText
    prompt: str
    length: int
    cell: list[str] | None  # a one-item list shared by the links of a path (see `_join`)

    def __init__(self, above: str | LinkedText, prompt: str) -> None:
        self.above = above
        self.prompt = prompt
        above_length = above.length if type(above) is LinkedText else len(above)
        self.length = above_length + MARKER_LENGTH + len(prompt)
        # a one-item list shared by the links of a path: the longest string joined along it
        self.cell: list[str] | None = None

    def __len__(self) -> int:
        return self.length

    def __str__(self) -> str:
        cell = self.cell
        if cell is not None:
            whole = cell[0]
            return whole if len(whole) == self.length else whole[: self.length]
        return self._join()

    def _join(self) -> str:
        """Walk up to the nearest link with a known string (or the top), join the prompts met
        on the way below it, and share the string with the links walked."""
        walked = [self]
        node = self.above
        while type(node) is LinkedText and node.cell is None:
            walked.append(node)
            node = node.above
        if type(node) is LinkedText:
            assert node.cell is not None  # (the loop stopped at a link with a string)
            whole = node.cell[0]
            top = whole if len(whole) == node.length else whole[: node.length]
            # the longest string of that path is this link's own text: grow it in its cell
            cell = node.cell if len(whole) == node.length else None
        else:
            top, cell = str(node), None
        text = AGENT_COORDINATOR_MARKER.join([top, *(link.prompt for link in reversed(walked))])
        if cell is None:
            cell = [text]
        else:
            cell[0] = text
        for link in walked:
            link.cell = cell
        return text

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LinkedText | str):
            return len(other) == self.length and str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"LinkedText({self.length} chars)"

    # immutable (its cell only caches): a copy is itself, and a deep chain must not be copied
    # (or pickled) level by level, recursively
    def __copy__(self) -> LinkedText:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LinkedText:
        return self

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (str(self),)


Text = str | LinkedText


# A text above shorter than this is copied into a plain string (what a link would save is
# less than what it costs: a wide tree's texts are short); longer, it is linked. So a chain's
# first levels are strings, and every level below the first long one a link.
LINK_FROM_CHARS = 4_096


def linked(task_prompt: str, prompt_context: Text | None) -> Text:
    """C21, held: task_prompt alone without prompt_context; else prompt_context, the marker
    and task_prompt, as a string when the text above is a short string, as a link otherwise."""
    if not prompt_context:  # (None or "": an empty LinkedText cannot be made)
        return task_prompt
    if type(prompt_context) is str and len(prompt_context) < LINK_FROM_CHARS:
        return f"{prompt_context}{AGENT_COORDINATOR_MARKER}{task_prompt}"
    return LinkedText(prompt_context, task_prompt)


def as_str(text: Text) -> str:
    return text if type(text) is str else str(text)


class _HeldText:
    """A dataclass field that may be given a `LinkedText` and is read as a `str`; `raw()` gives
    what it holds. (A descriptor as a field's default: the dataclass hands it the value.)"""

    slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}_held"

    def __set__(self, obj: object, value: Text | None) -> None:
        obj.__dict__[self.slot] = value

    def raw(self, obj: object) -> Text | None:
        held: Text | None = obj.__dict__[self.slot]
        return held

    def _read(self, obj: object) -> str | None:
        held = obj.__dict__[self.slot]
        return held if held is None or type(held) is str else str(held)


class RequiredText(_HeldText):
    """A text that must be given (PromptAndContext.prompt)."""

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> RequiredText: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> str: ...
    def __get__(self, obj: object | None, objtype: type | None = None) -> str | RequiredText:
        if obj is None:  # the dataclass asks for a default: there is none
            raise AttributeError(self.slot)
        return self._read(obj) or ""
