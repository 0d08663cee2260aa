"""`Trace.record_json`: events recorded as the fields they were handed, made into dicts when
the trace is read."""

from __future__ import annotations

from runner.trace import Trace


def test_a_shared_tuple_of_objects_becomes_each_events_own_list_of_copies() -> None:
    shared = ({"tool": "noop", "reason": "forced"},)
    trace = Trace()
    trace.record_json("activation", "1.1", {"mode": "forced", "activated": shared})
    trace.record_json("activation", "1.2", {"mode": "forced", "activated": shared})
    first, second = trace.events
    assert first["activated"] == second["activated"] == [{"tool": "noop", "reason": "forced"}]
    first["activated"][0]["reason"] = "changed by a reader"
    assert second["activated"] == [{"tool": "noop", "reason": "forced"}]
    assert shared == ({"tool": "noop", "reason": "forced"},)
