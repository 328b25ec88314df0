"""Every engine's judge and views take any reply: random nesting, length and bytes (hypothesis).

The property is stronger than "no exception escapes" (``Engine.score`` never raises by
construction): the engine's own reader, scorer, tagger and views must not fail either,
so no reply may end in ``scorer_error``; every view must serialise to JSON and render
through the inspector's renderers. Replies are built around each engine's gold answer
(its own syntax), nested in the brackets its grammar uses, repeated, or random text.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from engines import get_engine
from engines.core import STATUSES
from engines.replies import MAX_NESTING
from n2f_tui.itemview import Extent, view_parts
from n2f_tui.render import Fold, render_view
from sessions import api

ENGINES = ("compost", "dedc", "logic", "robogrid", "rgp")
BRACKETS = {"compost": ("{ ", " }", "FILTER(", ")"), "dedc": ("f0 (", ")", "(", ")"),
            "logic": ("(", ")", "¬(", ")"), "robogrid": ("[ ", " ]", "(", ")"), "rgp": ("[", "]", "(", ")")}


@lru_cache(maxsize=None)
def setup(engine: str):
    spec = get_engine(engine)
    _, settings_, items = api.build_items(engine, [], 0)
    item = items[0]
    outputs: list[str] = []
    while (step := spec.next_step(item, settings_, outputs)) is not None and step.kind == "model":
        outputs.append(spec.oracle(item, step, outputs))
    return spec, settings_, item, outputs


def replies(engine: str) -> st.SearchStrategy[str]:
    spec, _, item, gold = setup(engine)
    core = gold[-1]
    a, b, c, d = BRACKETS[engine]
    nested = st.tuples(st.integers(0, MAX_NESTING + 40), st.booleans(), st.booleans()).map(
        lambda t: (a * t[0] if t[1] else c * t[0]) + core + ((b if t[1] else d) * (t[0] - (t[0] // 3 if t[2] else 0))))
    repeated = st.integers(1, 400).map(lambda k: "\n".join([core] * k))
    cut = st.integers(0, len(core)).map(lambda k: core[:k])
    noise = st.one_of(st.text(max_size=400), st.binary(max_size=400).map(lambda b: b.decode("utf-8", "replace")),
                      st.text(alphabet="(){}[]¬∧∨→;:=,. \nx1?\"'`", max_size=2_000))
    return st.one_of(nested, repeated, cut, noise, st.tuples(noise, st.just(core), noise).map("".join))


def judged(engine: str, reply: str) -> None:
    spec, settings_, item, gold = setup(engine)
    outputs = [*gold[:-1], reply]
    verdict = spec.score(item, outputs, settings_, with_views=True)
    assert verdict.status in STATUSES and verdict.status != "scorer_error", verdict.error
    json.dumps(verdict.to_json())
    console = Console(width=100, file=open("/dev/null", "w"), record=False)
    for part in view_parts(verdict.views, Extent(Fold(rows=20, lines=40))) + [render_view(v) for v in verdict.views]:
        console.print(part)
    assert spec.next_call(item, settings_, outputs)[1] == ""


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_reply_is_judged_and_its_views_drawn(engine, data):
    judged(engine, data.draw(replies(engine)))
