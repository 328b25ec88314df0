"""DEDC prompt, parser and checker against the official data (10 files x 323 items)."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engines.core import Item, SettingsError
from engines.dedc import ENGINE
from engines.dedc.parse import Call, Parsed, parse_answer
from engines.dedc.primitives import NAME_MAPPINGS
from engines.dedc.prompts import DEFAULT_TEMPLATE
from engines.dedc.score import gold_expansions
from engines.dedc.settings import DedcSettings
from engines.parsing import ParseFailure
from official_data import DATA_ROOT

DATA = DATA_ROOT / "dedc"
FILES = sorted(DATA.glob("*.full.jsonl"))
pytestmark = pytest.mark.needs_data


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("N2F_HOME", str(tmp_path))


def _names(path: Path) -> str:
    return "anomalous" if "_anom" in path.name else "cross" if "_cross" in path.name else "opaque"


def load_official(path: Path) -> list[tuple[Item, dict]]:
    """Items in the engine's format built straight from an official .full.jsonl file."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        demos = [{"question": d["question"], "answer": d["output_steps"]} for d in row["demo"]]
        item = Item(
            id=f"{path.name}-{i}", engine="dedc",
            inputs={"question": row["question"], "demonstrations": demos, "n_primitive_demos": len(demos) - 3,
                    "prompt": row["input_text"]},
            gold={"answer": row["output_steps"], "accepted": row["candi_outputs"]},
            meta={"names": _names(path), "graph_type": f"{row['graph_tp'][0]}:{','.join(row['graph_tp'][1])}",
                  "primitives": row["nodes"], "source": path.name})
        out.append((item, row))
    return out


@pytest.fixture(scope="module")
def official() -> dict[str, list[tuple[Item, dict]]]:
    return {p.name: load_official(p) for p in FILES}


# ----------------------------------------------------------------------- prompt


def test_ten_official_files():
    assert len(FILES) == 10


def test_default_prompt_reproduces_input_text(official):
    n = 0
    for rows in official.values():
        for item, row in rows:
            bare = Item(item.id, "dedc", {k: v for k, v in item.inputs.items() if k != "prompt"}, item.gold, item.meta)
            step = ENGINE.next_step(bare, DedcSettings(), [])
            assert step is not None and step.name == "answer" and step.template == "answer"
            assert len(step.messages) == 1 and step.messages[0].role == "user"
            assert step.messages[0].content == row["input_text"]
            n += 1
    assert n == 3230


def test_step_params_and_single_step(official):
    item = official[FILES[0].name][0][0]
    step = ENGINE.next_step(item, DedcSettings(temperature=0.7, max_tokens=100), [])
    assert dict(step.params) == {"temperature": 0.7, "max_tokens": 100}
    assert ENGINE.next_step(item, DedcSettings(), ["view_1 := f0 (all, attr_1, 2); result := view_1;"]) is None
    assert ENGINE.templates(DedcSettings()) == {"answer": DEFAULT_TEMPLATE}


def test_user_template_placeholders(official):
    item = official["4_to_4_shot3_show_primitive.full.jsonl"][0][0]
    tpl = 'JSON {"a": 1} {{literal}}\n{shot_examples}\n--\n{primitive_examples}\nQ: {question}\nA:'
    text = ENGINE.next_step(item, DedcSettings(), [], {"answer": tpl}).messages[0].content
    demos = item.inputs["demonstrations"]
    k = item.inputs["n_primitive_demos"]
    assert text.startswith('JSON {"a": 1} {literal}\nQuestion: ' + demos[0]["question"])
    assert f"Answer: {demos[-k - 1]['answer']}\n--\nQuestion: {demos[-k]['question']}" in text
    assert text.endswith(f"Q: {item.inputs['question']}\nA:")
    with pytest.raises(SettingsError, match=r"unknown placeholder \{demos\}.*\{examples\}"):
        ENGINE.next_step(item, DedcSettings(), [], {"answer": "{demos} {question}"})


# ------------------------------------------------------------------------ parse

GOLD = "view_1 := f0 (all, attr_395, 864); view_2 := f1 (view_1, attr_777, 913); result := view_2;"
LINES = GOLD.replace("; ", ";\n")


@pytest.mark.parametrize("text, clean", [
    (GOLD, True),
    (LINES, True),
    ("  " + GOLD.replace(" ", "   ") + "\n\n", True),
    (LINES.replace(";", ""), True),
    (f"```\n{LINES}\n```", False),
    (f"```plaintext\n{LINES}\n```", False),
    (f"Answer: {GOLD}", False),
    (f"Sure! Here are the expressions:\n{LINES}\nThis filters first, then takes the top items.", False),
    (f"**Answer:**\n```plaintext\n{GOLD}\n```\nHope this helps.", False),
    ("1. view_1 := f0 (all, attr_395, 864);\n2. view_2 := f1 (view_1, attr_777, 913);\n3. result := view_2;", False),
    ("`view_1 := f0 (all, attr_395, 864)`; `view_2 := f1 (view_1, attr_777, 913)`; `result := view_2`", False),
    (f"Draft:\n```\nview_1 := f0 (all, attr_1, 1); result := view_1;\n```\nFinal:\n```\n{LINES}\n```", False),
])
def test_parse_tolerant_extraction(text, clean):
    parsed = parse_answer(text)
    assert isinstance(parsed, Parsed), parsed
    assert [a.text() for a in parsed.assignments] == [
        "view_1 := f0 (all, attr_395, 864)", "view_2 := f1 (view_1, attr_777, 913)", "result := view_2"]
    assert parsed.clean is clean, parsed.removed


def test_parse_nested_single_expression():
    parsed = parse_answer("result := f1 (f0 (all, attr_395, 864), attr_777, 913);")
    assert isinstance(parsed, Parsed)
    value = parsed.assignments[0].value
    assert isinstance(value, Call) and isinstance(value.args[0], Call) and value.args[0].symbol == "f0"


@pytest.mark.parametrize("text, line, column, fragment", [
    ("", 1, 1, "empty"),
    ("I do not know.", 1, 1, "no assignment"),
    ("view_1 = f0 (all, attr_1, 5); result = view_1;", 1, 1, "no assignment"),
    ("view_1 := f0 (all, attr_1, 5);\nview_2 := f1 (view_1, attr_2", 2, 14, "unclosed"),
    ("view_1 := f0 (all, attr_1, 5);\n  := f1 (view_1, attr_2, 3)", 2, 3, "without a target"),
    ("view_1 := f0 (all; attr_1, 5);", 1, 18, "expected ',' or ')'"),
    ("view_1 := ;", 1, 11, "expected a variable"),
    ("```\nview_1 := f0 (all, 'attr_1', 5)\n```", 2, 20, "expected a variable"),
])
def test_parse_failures_have_positions(text, line, column, fragment):
    failure = parse_answer(text)
    assert isinstance(failure, ParseFailure), failure
    assert (failure.line, failure.column) == (line, column), failure
    assert fragment in failure.message
    assert "^" in failure.context


def test_unparseable_verdict_names_the_position():
    item = Item("x", "dedc", {}, {"answer": GOLD}, {"names": "opaque"})
    verdict = ENGINE.score(item, ["view_1 := f0 (all, attr_395\n"], DedcSettings())
    assert verdict.status == "unparseable" and verdict.scores == {"correct": 0.0}
    assert [t.code for t in verdict.tags] == ["unparseable"]
    assert "line 1, column 14" in verdict.tags[0].evidence
    assert ENGINE.score(item, [], DedcSettings()).status == "unparseable"


_FUZZ_ITEM = Item("fuzz", "dedc", {}, {"answer": GOLD, "accepted": ["f1(f0(all,attr_395,864),attr_777,913)"]},
                  {"names": "opaque"})


def _check_no_crash(text: str) -> None:
    parsed = parse_answer(text)
    assert isinstance(parsed, (Parsed, ParseFailure))
    verdict = ENGINE.score(_FUZZ_ITEM, [text], DedcSettings())
    assert verdict.status in ("correct", "wrong", "unparseable")
    json.dumps(verdict.to_json())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list("view_12 :=f0(),;all attr\n`*result") + ["```", ":=", "f8", "view_1", "attr_9"]),
                max_size=120).map("".join) | st.text(max_size=200))
def test_fuzz_random_text_never_crashes(text):
    _check_no_crash(text)


# The token rules written as one named group each, matched one token at a time: the reference
# the scanner (which tells a token's kind by its text) is held to.
_REFERENCE_TOKENS = re.compile(
    r"(?P<FENCE>```[^\S\n]*[A-Za-z0-9_+\-.]*)|(?P<ASSIGN>:=)|(?P<ATOM>-?[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)"
    r"|(?P<LP>\()|(?P<RP>\))|(?P<COMMA>,)|(?P<SEMI>;)|(?P<NL>\n)|(?P<WS>[^\S\n]+)|(?P<NOISE>[`*]+)|(?P<OTHER>.)",
    re.DOTALL)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list("`*()-,;:=.\n \t\r\x0b\x1c\u00a0\u2028ab_Z9é") + ["```", "```py ", ":=", "-5", "f8"]),
                max_size=80).map("".join) | st.text(max_size=120))
def test_the_scanner_splits_and_names_tokens_as_the_named_rules_do(text):
    from engines.dedc.parse import _Scanner

    scanner = _Scanner(text)
    expected = [(m.lastgroup, m.group(), m.start()) for m in _REFERENCE_TOKENS.finditer(text)]
    assert list(zip(scanner.kinds, scanner.values, scanner.starts)) == [t for t in expected if t[0] != "NOISE"]
    assert scanner.noise == [at for kind, _, at in expected if kind == "NOISE"]


_ATOMS = st.sampled_from(["all", "attr_1", "view_1", "-5", "12", "a.b", "x", "a-5", "é"])
_BLANKS = st.sampled_from(["", " ", "  ", "\n", "\t", " \n ", "\r\n", "\u00a0"])
_CALLS = st.builds(lambda symbol, blank, args, end: f"{symbol}{blank}({', '.join(args)}{end})",
                   st.sampled_from(["f0", "f8", "-1", "g.h"]), st.sampled_from(["", " ", "\n", "\t"]),
                   st.lists(_ATOMS, max_size=4), _BLANKS)
_STATEMENTS = st.builds(lambda target, before, after, value: f"{target}{before}:={after}{value}",
                        st.sampled_from(["view_1", "result", "_x", "1a", "v.x", "r"]),
                        st.sampled_from(["", " ", "\n"]), st.sampled_from(["", " ", "\n", "\t"]), _ATOMS | _CALLS)
_SEPARATORS = st.sampled_from(["", " ", ";", "; ", ";\n", "\n", ";;", " ; ", "\n\n", " x ", "```\n", "`"])


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_SEPARATORS, _STATEMENTS), min_size=1, max_size=6), _SEPARATORS)
def test_a_plain_answer_reads_as_the_scanner_reads_it(parts, tail):
    """The regular-expression reading of plain answers is held to the token-by-token one."""
    from engines.dedc import parse

    text = "".join(separator + statement for separator, statement in parts) + tail
    plain = parse._plain_answer(text)
    assert plain is None or plain == parse._scanned_answer(text), text


def test_a_short_reply_is_read_once_while_it_is_recent_and_a_long_one_every_time():
    """The simulator's reading of a reply is the scorer's; a reading is immutable, so it is shared."""
    from engines.dedc import parse

    chatty = "Here you go: " + GOLD
    assert parse_answer(chatty) is parse_answer(chatty) and parse_answer(chatty) == parse._scanned_answer(chatty)
    long_reply = chatty + " " * parse.MAX_KEPT_TEXT
    assert parse_answer(long_reply) is not parse_answer(long_reply)
    assert parse_answer(long_reply) == parse._scanned_answer(long_reply)


@pytest.mark.parametrize("text", [GOLD, LINES, LINES.replace(";", ""), "  " + GOLD.replace(" ", "   ") + "\n\n",
                                  "result := f1 (f0 (all, attr_395, 864), attr_777, 913);"])
def test_plain_answers_skip_the_scanner_and_others_do_not(text):
    from engines.dedc import parse

    nested = "f0 (all" in text and "f1 (f0" in text
    assert (parse._plain_answer(text) is None) is nested
    assert parse._plain_answer(f"Answer: {text}") is None and parse._plain_answer(f"```\n{text}\n```") is None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["delete", "insert", "duplicate", "swap", "replace"]),
                          st.integers(0, 10_000), st.integers(0, 10_000), st.text(max_size=8)),
                min_size=1, max_size=6))
def test_fuzz_mutated_answers_never_crash(mutations):
    text = LINES
    for op, a, b, piece in mutations:
        i, j = sorted((a % (len(text) + 1), b % (len(text) + 1)))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + piece + text[i:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "swap" and j < len(text):
            text = text[:i] + text[j] + text[i + 1:j] + text[i] + text[j + 1:] if i < j else text
        else:
            text = text[:i] + piece + text[j:]
    _check_no_crash(text)


def test_pathological_inputs_stay_bounded():
    chain = "v0 := f0 (all, attr_1, 1); " + " ".join(f"v{i} := f0 (v{i - 1}, attr_1, 1);" for i in range(1, 3000))
    doubling = "v0 := f8 (1, 2); " + " ".join(f"v{i} := f8 (v{i - 1}, v{i - 1});" for i in range(1, 80))
    deep = "result := " + "f0(" * 500 + "all" + ")" * 500
    for text in (chain + " result := v2999;", doubling + " result := v79;", deep, "(" * 5000, ":=" * 3000):
        cpu = time.process_time()  # CPU, not wall time: a busy machine must not fail it (0.64 s for the chain here)
        _check_no_crash(text)
        assert time.process_time() - cpu < 2.0


# ---------------------------------------------------------------------- checker


def test_own_expansion_equals_official_candidates(official):
    n = 0
    for name, rows in official.items():
        names = _names(Path(name))
        for item, row in rows:
            assert gold_expansions(row["output_steps"], names) == set(row["candi_outputs"]), (name, row["output_steps"])
            n += 1
    assert n == 3230


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _steps(answer: str) -> list[tuple[str, str]]:
    out = []
    for piece in answer.split(";"):
        if piece.strip():
            left, right = piece.split(":=")
            out.append((left.strip(), right.strip()))
    return out


def _reorder_and_rename(answer: str, rng: random.Random) -> str:
    """Another valid topological order with fresh intermediate names (independent of the engine)."""
    steps = _steps(answer)
    targets = {t for t, _ in steps if t != "result"}
    deps = {t: {x for x in _TOKEN.findall(r) if x in targets} for t, r in steps}
    order, done = [], set()
    pending = [t for t, _ in steps if t != "result"]
    while pending:
        ready = [t for t in pending if deps[t] <= done]
        pick = rng.choice(ready)
        order.append(pick)
        done.add(pick)
        pending.remove(pick)
    fresh = {t: f"tmp_{k}_{rng.randint(10, 99)}" for k, t in enumerate(rng.sample(sorted(targets), len(targets)))}
    rhs = dict(steps)

    def rename(text: str) -> str:
        return _TOKEN.sub(lambda m: fresh.get(m.group(), m.group()), text)
    lines = [f"{fresh[t]}  :=  {rename(rhs[t]).replace(', ', ' ,  ')}" for t in order]
    lines.append(f"result := {rename(rhs['result'])}")
    return "```plaintext\n" + ";\n".join(lines) + ";\n```"


@pytest.mark.slow
def test_every_accepted_answer_is_accepted(official):
    rng = random.Random(1)
    for rows in official.values():
        for item, row in rows:
            answers = [row["output_steps"], _reorder_and_rename(row["output_steps"], rng)]
            answers += [f"result := {c};" for c in row["candi_outputs"]]
            answers += [f"```\nresult :=  {c.replace(',', ' , ')}\n```" for c in row["candi_outputs"]]
            for text in answers:
                verdict = ENGINE.score(item, [text], DedcSettings())
                assert verdict.status == "correct", (text, verdict.tags)
                assert verdict.scores == {"correct": 1.0}
                error_tags = {t.code for t in verdict.tags} - {"format_violation"}
                assert not error_tags


def _swap_add_args(answer: str, names: str) -> str:
    add = NAME_MAPPINGS[names]["add"]
    return re.sub(rf"(:= {add} \()([^,()]+), ([^,()]+)\)", r"\1\3, \2)", answer)


def test_commutative_primitive_by_meaning(official):
    swapped = 0
    for name, rows in official.items():
        names = _names(Path(name))
        for item, row in rows:
            text = _swap_add_args(row["output_steps"], names)
            if text != row["output_steps"]:
                swapped += 1
                assert ENGINE.score(item, [text], DedcSettings()).status == "correct"
    assert swapped == 420  # 42 items with an add step in each of the 10 files


def test_non_commutative_swap_is_rejected():
    gold = "view_1 := f2 (all, attr_1, attr_2); value_1 := f5 (view_1); result := value_1;"
    item = Item("x", "dedc", {}, {"answer": gold}, {"names": "opaque"})
    swapped = gold.replace("attr_1, attr_2", "attr_2, attr_1")
    assert ENGINE.score(item, [swapped], DedcSettings()).status == "wrong"


def _mutations(answer: str, names: str) -> dict[str, str]:
    steps = _steps(answer)
    symbols = set(NAME_MAPPINGS[names].values())
    out = {}
    t, r = steps[0]
    attr = re.search(r"attr_(\d+)", answer)
    out["argument"] = answer.replace(attr.group(0), f"attr_{int(attr.group(1)) + 1000}", 1)
    sym = r.split("(")[0].strip()
    other = sorted(symbols - {sym})[0]
    out["primitive"] = answer.replace(f"{t} := {sym} (", f"{t} := {other} (", 1)
    # an antecedent: the first use of an intermediate variable becomes `all`
    for t2, r2 in steps[1:]:
        used = [x for x in _TOKEN.findall(r2) if x in {s for s, _ in steps}]
        if used and t2 != "result":
            changed = re.sub(rf"\b{used[0]}\b", "all", r2, count=1)
            out["antecedent"] = answer.replace(f"{t2} := {r2}", f"{t2} := {changed}", 1)
            break
    return out


@pytest.mark.slow
def test_checker_rejects_changes(official):
    kinds = set()
    for name, rows in official.items():
        names = _names(Path(name))
        for item, row in rows:
            for kind, text in _mutations(row["output_steps"], names).items():
                assert text != row["output_steps"]
                verdict = ENGINE.score(item, [text], DedcSettings())
                assert verdict.status == "wrong", (kind, text)
                assert {t.code for t in verdict.tags} - {"format_violation"}, (kind, text)
                kinds.add(kind)
    assert kinds == {"argument", "primitive", "antecedent"}


def test_substitution_is_token_aware_only_in_the_lenient_reading():
    """The paper's str.replace turns `view_10` into `<view_1's expression>0`: the strict verdict (the
    authors' checker) counts that answer wrong, as they did; the statement reading does not."""
    gold = ("view_1 := f0 (all, attr_1, 5); view_2 := f1 (view_1, attr_2, 7); value_1 := f5 (view_2); "
            "result := value_1;")
    output = ("view_1 := f0 (all, attr_1, 5); view_10 := f1 (view_1, attr_2, 7); value_1 := f5 (view_10); "
              "result := value_1;")
    item = Item("x", "dedc", {}, {"answer": gold}, {"names": "opaque"})
    strict = ENGINE.score(item, [output], DedcSettings())
    assert strict.status == "wrong" and [t.code for t in strict.tags] == ["format_violation"]
    assert ENGINE.score(item, [output], DedcSettings(extract="lenient")).scores["lenient_correct"] == 1.0

    def naive(text: str) -> str:  # convert_to_one as released
        store: dict[str, str] = {}
        for left, right in _steps(text):
            for k, v in store.items():
                right = right.replace(k, v)
            store[left] = right
        return store["result"].replace(" ", "")
    assert naive(output) != naive(gold)


def test_cross_naming_swaps_add_by_meaning():
    # under cross naming `top_k` names add (commutative) and `add` names top_k (not commutative)
    gold = ("value_1 := sum (all); value_2 := kth_argmax (all, attr_3, 4); value_3 := top_k (value_1, value_2); "
            "view_1 := add_c (all, attr_9, value_3); result := view_1;")
    item = Item("x", "dedc", {}, {"answer": gold}, {"names": "cross"})
    assert ENGINE.score(item, [gold.replace("top_k (value_1, value_2)", "top_k (value_2, value_1)")],
                        DedcSettings()).status == "correct"
    assert gold_expansions(gold, "cross") == {
        "add_c(all,attr_9,top_k(sum(all),kth_argmax(all,attr_3,4)))",
        "add_c(all,attr_9,top_k(kth_argmax(all,attr_3,4),sum(all)))"}
    assert len(gold_expansions(gold, "opaque")) == 1
