"""A JAX rule table (`ad.primitive_jvps`, `batching.primitive_batchers`, ...) over one
of minijax's: setting `table[p] = rule` keeps the user's rule (what reading the entry
gives back) and puts its translation to minijax's signature into minijax's table."""
from __future__ import annotations

from collections.abc import MutableMapping

from ..frontend.user_primitives import Primitive


def check_user_primitive(prim, where: str):
    if not isinstance(prim, Primitive):
        raise TypeError(f"{where} takes a primitive made with "
                        f"minijax.extend.core.Primitive; minijax's own primitives keep "
                        f"the rules they have, got {prim!r}")


class UserRuleTable(MutableMapping):
    def __init__(self, name: str, minijax_table: dict, translate):
        self._name = name
        self._minijax_table = minijax_table
        self._translate = translate       # (prim, user's rule) -> minijax's rule
        self._rules = {}

    def __setitem__(self, prim, rule):
        check_user_primitive(prim, self._name)
        if not callable(rule):
            raise TypeError(f"{self._name}[{prim.name}] must be a function, got {rule!r}")
        self._rules[prim] = rule
        self._minijax_table[prim] = self._translate(prim, rule)

    def __getitem__(self, prim):
        return self._rules[prim]

    def __delitem__(self, prim):
        del self._rules[prim]
        self._minijax_table.pop(prim, None)

    def __iter__(self):
        return iter(self._rules)

    def __len__(self):
        return len(self._rules)

    def __repr__(self):
        return f"<{self._name}: rules of {len(self._rules)} user primitives>"
