"""The authors' answer checker, rule by rule: what the paper's accuracy counts (the strict reading).

Released code (``xzy-xzy/DEDC``, see ``released-code-notes.md`` section 1, "Answer checking"):

1. the batch path (``icl_batch_eval.py``) first deletes every backtick and every
   ``plaintext`` from the reply (so a ```` ```plaintext ```` fence vanishes; the per-call
   path ``icl_eval.py`` skips this step, which only matters for fenced replies);
2. ``convert_to_one`` splits the reply on ``;``; each segment is split on ``:=`` and a
   segment without one is skipped (prose after a final ``;`` costs nothing); the left side
   (stripped) is the variable, the text after the first ``:=`` up to the next ``:=`` (stripped)
   its value;
3. in each value, the earlier variables are replaced by their values with ``str.replace``, in
   the order they were defined (so ``view_1`` also rewrites the head of ``view_10``);
4. the value of ``result``, with its spaces (only spaces: not line breaks) removed, is the
   answer; without ``result`` there is none;
5. the answer is correct iff it equals one of the item's ``candi_outputs`` (every
   combination of the commutative ``add``'s two arguments).

Consequences this module keeps on purpose: one assignment per line without ``;`` is a single
segment whose value runs to the next ``:=``, so ``result`` is never defined and the answer
is wrong; a sentence after the last ``;`` is ignored, one after ``result := view_4`` without a
final ``;`` stays inside the value (and the answer is wrong); an ``Answer:`` prefix becomes part
of the first variable's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

MAX_VALUE = 20_000  # characters of one substituted value; beyond it the value stands for "too large"
MAX_STATEMENTS = 100  # assignments read (no accepted answer has more than 5; bounds the quadratic replacement)
_TOO_LARGE = None


def batch_clean(reply: str) -> str:
    """Step 1: the batch path's clean-up (backticks and the word ``plaintext`` deleted)."""
    return reply.replace("`", "").replace("plaintext", "")


def convert_to_one(reply: str) -> str | None:
    """Steps 2-4: the single expression the reply's ``result`` stands for, or None.

    A value that grows past ``MAX_VALUE`` characters (``a := x; b := a a; c := b b; ...``) is
    kept as "too large"; an answer built from it is None, since no accepted answer is that long.
    A reply of more than ``MAX_STATEMENTS`` assignments has no answer either.
    """
    assigned: dict[str, str | None] = {}
    for segment in reply.split(";"):
        parts = segment.split(":=")
        if len(parts) < 2:
            continue
        if len(assigned) >= MAX_STATEMENTS:
            return None
        left, right = parts[0].strip(), parts[1].strip()
        value: str | None = right
        for name, known in assigned.items():
            if value is None or name not in value:
                continue
            value = _TOO_LARGE if known is None else value.replace(name, known)
            if value is not None and len(value) > MAX_VALUE:
                value = _TOO_LARGE
        assigned[left] = value
    result = assigned.get("result")
    return None if result is None else result.replace(" ", "")


@dataclass(frozen=True)
class AuthorsCheck:
    """What the authors' checker made of a reply: its single expression and whether it is accepted."""

    correct: bool
    expression: str | None  # convert_to_one's answer (None: no ``result``, or too large)

    def explain(self) -> str:
        if self.expression is None:
            return ("the authors' checker finds no 'result' (it splits the reply on ';' and ':='; "
                    "statements not separated by ';' run together)")
        return f"the authors' checker reads the answer as {self.expression!r}"


def authors_check(reply: str, candidates: Iterable[str]) -> AuthorsCheck:
    """Step 5 on the batch path's reading of ``reply``."""
    expression = convert_to_one(batch_clean(reply))
    return AuthorsCheck(expression is not None and expression in set(candidates), expression)
