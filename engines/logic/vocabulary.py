"""The symbols an item may use, shown to the model in both directions of the round trip.

The NL->FS step sees only the description and this vocabulary, so the vocabulary is part
of the item (``inputs["vocabulary"]``) and travels with it as JSON. The tagger reads it to
name hallucinated symbols and wrong predicate arities.

Vocabularies (the released code's, in our names):
- propositional: ``x1 .. xn`` (the paper's notation for the CNF variables);
- FOL symbolic: predicates ``p1 .. p8`` of arity 1 or 2, objects ``o1 .. o6``;
- FOL English: verbs as predicates (``Runs(?a)``, ``Loves(?a, ?b)``) and first names as
  objects, as in the paper's ``Friend(John, Mary)``;
- both FOL vocabularies quantify over ``x1``, ``x2`` (the released ``x1.``, ``x2.``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from engines.core import DataError

PROPOSITIONAL, FOL = "propositional", "fol"
SYMBOLIC, ENGLISH = "symbolic", "english"

SYMBOLIC_PREDICATES = (("p1", 1), ("p2", 2), ("p3", 1), ("p4", 2), ("p5", 1), ("p6", 2), ("p7", 1), ("p8", 2))
SYMBOLIC_CONSTANTS = ("o1", "o2", "o3", "o4", "o5", "o6")
ENGLISH_PREDICATES = (("Runs", 1), ("Sleeps", 1), ("Sings", 1), ("Smiles", 1),
                      ("Loves", 2), ("Knows", 2), ("Helps", 2), ("Trusts", 2))
ENGLISH_CONSTANTS = ("John", "Mary", "Alice", "Bob", "Carol", "Dave")
FOL_VARIABLES = ("x1", "x2")


@dataclass(frozen=True)
class Vocabulary:
    logic: str  # PROPOSITIONAL | FOL
    propositions: tuple[str, ...] = ()
    predicates: tuple[tuple[str, int], ...] = ()  # (name, arity)
    constants: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()
    style: str = SYMBOLIC  # SYMBOLIC | ENGLISH: how descriptions read predicates

    @property
    def is_fol(self) -> bool:
        return self.logic == FOL

    @property
    def logic_name(self) -> str:
        """How the prompts name the logic."""
        return "first-order" if self.is_fol else "propositional"

    def arity(self, name: str) -> int | None:
        return dict(self.predicates).get(name)

    def known(self) -> frozenset[str]:
        """Every name a formula over this vocabulary may contain."""
        return frozenset((*self.propositions, *(p for p, _ in self.predicates), *self.constants, *self.variables))

    def lowered(self) -> "Vocabulary":
        """Every name in lower case: the vocabulary as the authors' reading sees it (they
        lowercase the reply before parsing, so ``Runs(John)`` is read as ``runs(john)``)."""
        return dataclasses.replace(
            self, propositions=tuple(p.lower() for p in self.propositions),
            predicates=tuple((p.lower(), a) for p, a in self.predicates),
            constants=tuple(c.lower() for c in self.constants), variables=tuple(v.lower() for v in self.variables))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"logic": self.logic}
        if self.is_fol:
            data.update(predicates=[{"name": p, "arity": a} for p, a in self.predicates],
                        constants=list(self.constants), variables=list(self.variables), style=self.style)
        else:
            data["propositions"] = list(self.propositions)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Vocabulary":
        try:
            logic = str(data["logic"])
            if logic not in (PROPOSITIONAL, FOL):
                raise ValueError(f"logic {logic!r}")
            return cls(
                logic=logic,
                propositions=tuple(str(p) for p in data.get("propositions", ())),
                predicates=tuple((str(p["name"]), int(p["arity"])) for p in data.get("predicates", ())),
                constants=tuple(str(c) for c in data.get("constants", ())),
                variables=tuple(str(v) for v in data.get("variables", ())),
                style=str(data.get("style", SYMBOLIC)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"not a logic vocabulary: {exc}") from None

    @lru_cache(maxsize=16)
    def text(self) -> str:
        """The [VOCABULARY] block of both prompts."""
        lines = ["Operators: ¬ means not, ∧ means and, ∨ means or."]
        if self.is_fol:
            lines.append("Quantifiers: ∀x means 'for every object x', ∃x means 'there is an object x'.")
            lines.append("Predicates (each with its number of arguments):")
            for name, arity in self.predicates:
                args = ", ".join(f"?{chr(ord('a') + i)}" for i in range(arity))
                lines.append(f"- {name}({args}): {arity} argument{'s' if arity != 1 else ''}")
            lines.append("Objects (constants): " + ", ".join(self.constants))
            lines.append("Variables (bound by the quantifiers): " + ", ".join(self.variables))
        else:
            lines.append("Propositions: " + ", ".join(self.propositions))
        return "\n".join(lines)


_read: dict[int, tuple[Mapping[str, Any], Vocabulary]] = {}


def vocabulary_of(data: Mapping[str, Any]) -> Vocabulary:
    """``Vocabulary.from_json`` remembered per JSON object (each step and the scorer ask for it)."""
    hit = _read.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    vocab = Vocabulary.from_json(data)
    if len(_read) >= 256:
        _read.clear()
    _read[id(data)] = (data, vocab)  # holding ``data`` keeps its id from being reused
    return vocab


def propositional(n: int) -> Vocabulary:
    return Vocabulary(PROPOSITIONAL, propositions=tuple(f"x{i}" for i in range(1, n + 1)))


def first_order(style: str) -> Vocabulary:
    if style == ENGLISH:
        return Vocabulary(FOL, predicates=ENGLISH_PREDICATES, constants=ENGLISH_CONSTANTS,
                          variables=FOL_VARIABLES, style=ENGLISH)
    return Vocabulary(FOL, predicates=SYMBOLIC_PREDICATES, constants=SYMBOLIC_CONSTANTS,
                      variables=FOL_VARIABLES, style=SYMBOLIC)
