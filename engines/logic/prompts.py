"""The two prompts of the round trip (after the released ``nlfs/prompts/prompt.py``).

Step 1, FS->NL (template ``fs_to_nl``): the formula and the vocabulary; the model must
describe the formula so that it can be rebuilt, without copying it. Step 2, NL->FS
(template ``nl_to_fs``): a fresh conversation holding only the step-1 description and
the vocabulary (never the formula), asking for the formula and nothing else.

Placeholders: ``{logic}`` ("propositional" or "first-order"), ``{vocabulary}`` (the
[VOCABULARY] block: operators, propositions or predicates with their arities, objects,
variables), ``{formula}`` (step 1 only) and ``{description}`` (step 2 only). ``{{`` and
``}}`` are literal braces.
"""

from __future__ import annotations

from typing import Mapping

from engines.core import Item, SettingsError
from engines.logic.vocabulary import vocabulary_of

FS_TO_NL, NL_TO_FS = "fs_to_nl", "nl_to_fs"
PLACEHOLDERS = {FS_TO_NL: ("logic", "vocabulary", "formula"), NL_TO_FS: ("logic", "vocabulary", "description")}

FS_TO_NL_TEMPLATE = (
    "[TASK]\n"
    "Your task is to convert the {logic} logic formula appearing after [FORMULA] into a natural "
    "language description. Do not copy the formula: describe it in plain English, precisely enough "
    "that someone who reads only your description and the vocabulary can reconstruct the formula "
    "exactly, including how its parts are grouped. Explicitly describe every predicate, object and "
    "proposition you use.\n\n"
    "[VOCABULARY]\n{vocabulary}\n\n"
    "[FORMULA]\n{formula}"
)

NL_TO_FS_TEMPLATE = (
    "[VOCABULARY]\n{vocabulary}\n\n"
    "[TASK]\n"
    "Your task is to interpret the natural language (NL) description of a {logic} logic formula "
    "appearing after [NL DESCRIPTION] and to write that formula. Use only the symbols of the "
    "vocabulary and the operators ¬, ∧, ∨ (and the quantifiers ∀, ∃ for first-order logic), with "
    "parentheses for grouping. Only output the formula and no other text.\n\n"
    "[NL DESCRIPTION]\n{description}"
)


def templates() -> dict[str, str]:
    return {FS_TO_NL: FS_TO_NL_TEMPLATE, NL_TO_FS: NL_TO_FS_TEMPLATE}


def fill(name: str, template: str, values: Mapping[str, str]) -> str:
    """Replace ``{placeholder}``s; an unknown or malformed one raises SettingsError naming the known ones."""
    try:
        return template.format_map(values)
    except KeyError as exc:
        known = ", ".join("{" + k + "}" for k in PLACEHOLDERS[name])
        raise SettingsError(f"prompt template {name!r}: unknown placeholder {{{exc.args[0]}}}; known: {known} "
                            "(write {{ and }} for literal braces)") from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise SettingsError(f"prompt template {name!r}: {exc} (write {{{{ and }}}} for literal braces)") from None


def build_prompt(name: str, item: Item, template: str | None, description: str = "") -> str:
    """The user message of step ``name``: step 2 gets the description, never the formula."""
    vocab = vocabulary_of(item.inputs["vocabulary"])
    values = {"logic": vocab.logic_name, "vocabulary": vocab.text()}
    if name == FS_TO_NL:
        values["formula"] = str(item.inputs["formula"])
    else:
        values["description"] = description
    return fill(name, template if template is not None else templates()[name], values)
