"""The critical lines of the engine's rules and of the checks that guard them, each with a
mutant that must fail the tests named beside it: the suite's word that it would notice.

Each entry: the rule or behaviour, the file, the exact text (it must occur once: a refactor that
moves it must move the entry too — the check says so), the mutant, and the test files that must
go red. Kept small and chosen by hand: one line a rule where a quiet change would break the
contract, rather than every line (a full mutation run over the engine takes hours on two cores).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    rule: str
    path: str
    original: str
    mutant: str
    tests: tuple[str, ...]


ENGINE = "tests/engine"

MUTANTS = (
    Mutant(
        "C11/C12: a coordinator that had its chance never runs again on the task or below",
        "runner/engine/coordinators.py",
        "            member.applied_coordinator_names.add(name)\n",
        "            pass\n",
        (ENGINE,),
    ),
    Mutant(
        "C4: the coordinator step is skipped at the depth limit",
        "runner/engine/coordinators.py",
        "if task.depth >= ctx.limits.max_depth:",
        "if task.depth > ctx.limits.max_depth:",
        (ENGINE,),
    ),
    Mutant(
        "C10: a coordinator that raised leaves the task as it was",
        "runner/engine/coordinators.py",
        "        snapshot.restore()\n",
        "        pass\n",
        (ENGINE,),
    ),
    Mutant(
        "C20b: a coordinator never sees prompt_context",
        "runner/engine/coordinators.py",
        "task.prompt_context = None  # C20b: never seen",
        "pass  # C20b: never seen",
        (ENGINE,),
    ),
    Mutant(
        "C21: execution text is prompt_context, the marker, then task_prompt",
        "runner/engine/marker.py",
        'return f"{prompt_context}{AGENT_COORDINATOR_MARKER}{task_prompt}"',
        'return f"{task_prompt}{AGENT_COORDINATOR_MARKER}{prompt_context}"',
        (ENGINE,),
    ),
    Mutant(
        "C22: the coordinator's directive is what follows the last marker",
        "runner/engine/marker.py",
        "_head, sep, tail = text.rpartition(AGENT_COORDINATOR_MARKER)",
        "_head, sep, tail = text.partition(AGENT_COORDINATOR_MARKER)",
        (ENGINE,),
    ),
    Mutant(
        "C14: forced activation runs no retrieval tool beside the required tools",
        "runner/engine/activation.py",
        "plan = forced_activation(ctx, task) if forced else await plan_activation(ctx, task)",
        "plan = await plan_activation(ctx, task)",
        (ENGINE,),
    ),
    Mutant(
        "C19: a conditional subtask whose decision raised runs",
        "runner/engine/subtasks.py",
        "        except Exception as exc:\n            decision = SubtaskDecision.RUN\n",
        "        except Exception as exc:\n            decision = SubtaskDecision.SKIP\n",
        (ENGINE,),
    ),
    Mutant(
        "C23: guaranteed context is never cut by answer.max_context_items",
        "runner/engine/answer.py",
        "    drawn_on = (*answer.used, *guaranteed)\n",
        "    drawn_on = tuple(answer.used)\n",
        (ENGINE,),
    ),
    Mutant(
        "C24: a round that ends without a question forgets the pending clarification",
        "runner/engine/round.py",
        "    if stop.outcome != CLARIFICATION:\n        state.pending = None\n",
        "    if stop.outcome != CLARIFICATION:\n        pass\n",
        (ENGINE,),
    ),
    Mutant(
        "an LLM call that names no task is charged to the task of the event before it",
        "runner/engine/channels.py",
        'task = fields.pop("task", None) or self.last_task',
        'task = fields.pop("task", None) or "1"',
        (ENGINE,),
    ),
    Mutant(
        "C16/C5: a conditional decision's LLM calls are charged to the subtask it decides",
        "runner/engine/context.py",
        "return TaskEnv(self, task, text, charged or task.task_no)",
        "return TaskEnv(self, task, text, task.task_no)",
        (ENGINE,),
    ),
    Mutant(
        "a tool's result lists each source once",
        "runner/sources.py",
        "    return tuple(dict.fromkeys(sources))\n",
        "    return tuple(sources)\n",
        ("tests/tools",),
    ),
    Mutant(
        "the offline answerer's first unit of a section scores 25 % more (docs/offline.md)",
        "runner/llm/providers/offline_scoring.py",
        "LEAD_BONUS = 0.25",
        "LEAD_BONUS = 0",
        ("tests/llm/test_offline_scoring.py",),
    ),
    Mutant(
        "no page of the service may be framed, by old browsers either",
        "runner/serve/hosts.py",
        '    (b"x-frame-options", b"DENY"),\n',
        "",
        ("tests/serve/test_security.py",),
    ),
)
