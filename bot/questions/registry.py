"""The question types: the YAML `type:` of each, mapped to its module's `TYPE`.

Adding a type is one module beside these (see `base.py` for what it provides) and one line here.
"""

from __future__ import annotations

from importlib import import_module

from bot.questions.base import Question

TYPE_MODULES = (
    "bot.questions.mc",
    "bot.questions.short",
    "bot.questions.order",
)

TYPES: dict[str, type[Question]] = {}
for _name in TYPE_MODULES:
    _type: type[Question] = import_module(_name).TYPE
    TYPES[_type.kind] = _type
