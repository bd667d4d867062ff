"""Explicit refusals: a call to a tool that does not exist, or an argument no tool declares,
is refused with `operation_forbidden` (or `ambiguous_request`), never ignored.

Which refusal condition applies is read from the words of the tool name, the argument name
and its string value (e.g. `write_notebook`, `{"mode": "edit"}`, `{"summarize": true}`). The
words only choose the condition: every undeclared tool and argument is refused either way.
"""

from __future__ import annotations

import re
from typing import Any

from . import errors

# condition (one of list_constraints' refusal_conditions) -> (operation phrase, word stems)
_INTENTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("requests for memory persistence", "Persisting memory",
     ("save", "persist", "stor", "remember", "memori", "memoriz", "learn", "train", "cache")),
    ("requests for mutation", "Mutation",
     ("writ", "edit", "delet", "remov", "updat", "creat", "modif", "insert", "append", "replac", "renam",
      "upload", "overwrit", "mutat", "commit", "eras", "purg", "reindex", "embed", "annotat", "tag")),
    ("requests for reasoning", "Reasoning",
     ("reason", "infer", "conclu", "synthes", "summar", "generat", "answer", "interpret", "analy", "think",
      "predict")),
    ("requests for decision-making", "Decision-making", ("decid", "decision", "recommend", "judg", "choos")),
    ("requests for external tool invocation", "Invoking external tools or workflows",
     ("execut", "invok", "trigger", "schedul", "workflow", "webhook", "shell", "command", "http", "email")),
]
_EXACT = {"set": 1, "add": 1, "put": 1, "move": 1, "drop": 1, "run": 4, "call": 4, "send": 4, "post": 1,
          "patch": 1, "rm": 1, "mv": 1, "cp": 1, "del": 1, "decide": 3}
_SPLIT_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORDS = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return _WORDS.findall(_SPLIT_CAMEL.sub(r"\1 \2", text).lower())


def intent(*texts: str) -> tuple[str, str] | None:
    """(condition, operation phrase) of the first forbidden intent found in the texts."""
    for text in texts:
        for word in words(text):
            if word in _EXACT:
                condition, operation, _stems = _INTENTS[_EXACT[word]]
                return condition, operation
            for condition, operation, stems in _INTENTS:
                if word.startswith(stems):
                    return condition, operation
    return None


def unknown_tool(name: Any, affordances: list[str]) -> errors.ToolError:
    found = intent(name) if isinstance(name, str) else None
    if found:
        error = errors.forbidden(found[1], found[0])
    else:
        error = errors.forbidden("Calling a tool that does not exist", "requests for external tool invocation")
        error.context = {"prohibition": "expanding affordances dynamically"}
    error.context = {**(error.context or {}), "available_affordances": affordances}
    return error


def undeclared_arguments(extra: dict[str, Any]) -> errors.ToolError:
    """Refuse arguments the tool does not declare; their names and values are not echoed."""
    for key, value in extra.items():
        found = intent(key, value if isinstance(value, str) else "")
        if found:
            return errors.forbidden(found[1], found[0])
    return errors.ambiguous("undeclared_argument")
