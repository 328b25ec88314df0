"""Real replies of Gemma 3 270M (``-m local``), judged as the papers judge them: one row per reply.

``tests/data/local_replies/ENGINE.jsonl`` holds what the local model answered to the first 20
items of each engine (seed and settings in ``corpus.json``): one replay record per item, with
``outputs`` per step (tool outputs included) and the ``finish_reasons`` llama.cpp reported.
``TABLE`` was written by reading each reply: the verdict the paper's own reading gives it and
the tags a reader should see, with the reason. The suite replays the replies without the
model; when a scorer change moves a verdict or a tag on one of them, the failure names the
reply and the reason its row gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from engines import get_engine
from engines.core import parse_settings
from engines.logic.reading import Reading, read_formula

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "local_replies"
CORPUS = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))
ENGINES = ("dedc", "logic", "compost", "robogrid", "rgp")

# engine, item number (1-based, run order), status, tag codes (space-separated), why
TABLE: list[tuple[str, int, str, str, str]] = [
    ('robogrid', 1, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules"),
    ('robogrid', 2, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the prompt's opening line verbatim, looped until the cap"),
    ('robogrid', 3, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the prompt's opening line verbatim, looped until the cap"),
    ('robogrid', 4, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the prompt's opening line verbatim, looped until the cap"),
    ('robogrid', 5, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules (they follow an 'EBNF:' header)"),
    ('robogrid', 6, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the opening line with 'new' for 'NEW', looped until the cap: a loop, not a verbatim echo"),
    ('robogrid', 7, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules (they follow an 'EBNF:' header)"),
    ('robogrid', 8, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules"),
    ('robogrid', 9, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the prompt's opening line verbatim, looped until the cap"),
    ('robogrid', 10, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules"),
    ('robogrid', 11, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the opening line with 'new' for 'NEW', looped until the cap: a loop, not a verbatim echo"),
    ('robogrid', 12, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules (they follow an 'EBNF:' header)"),
    ('robogrid', 13, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "'NEW' once, then the 'new' variant looped until the cap"),
    ('robogrid', 14, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules (they follow an 'EBNF:' header)"),
    ('robogrid', 15, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules (they follow an 'EBNF:' header)"),
    ('robogrid', 16, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the prompt's opening line verbatim, looped until the cap"),
    ('robogrid', 17, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the opening line with 'new' for 'NEW', looped until the cap: a loop, not a verbatim echo"),
    ('robogrid', 18, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "the prompt's opening line verbatim, looped until the cap"),
    ('robogrid', 19, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules"),
    ('robogrid', 20, 'unparseable', 'autoregressive_echoing truncated unparseable',
     "echoes the prompt's opening line, then its EBNF rules, cut at the cap: an echo of the prompt (whole-reply similarity), so no syntax tag is read off its rules (they follow an 'EBNF:' header)"),
    ('dedc', 1, 'unparseable', 'truncated unparseable',
     'writes a question of its own, then `row_1 :=` with no value before the cap'),
    ('dedc', 2, 'unparseable', 'truncated unparseable',
     'a question of its own, then the first call cut inside its arguments by the cap'),
    ('dedc', 3, 'unparseable', 'format_violation prompt_echo truncated unparseable',
     "repeats the test question, then assignments cut mid-call; prose before them fails the authors' reading"),
    ('dedc', 4, 'unparseable', 'prompt_echo truncated unparseable',
     'repeats the test question, answers `1` (no assignment), then starts the question again'),
    ('dedc', 5, 'unparseable', 'truncated unparseable',
     'a question of its own, then the second call cut inside its arguments'),
    ('dedc', 6, 'unparseable', 'prompt_echo truncated unparseable',
     'repeats the test question, answers `row_1` (no assignment), starts the question again'),
    ('dedc', 7, 'unparseable', 'truncated unparseable',
     'a question of its own, then a call cut inside its arguments'),
    ('dedc', 8, 'unparseable', 'format_violation prompt_echo truncated unparseable',
     'repeats the test question, then assignments cut at `value` (a target without `:=`)'),
    ('dedc', 9, 'unparseable', 'truncated unparseable',
     'a question of its own, then a call cut inside its arguments'),
    ('dedc', 10, 'unparseable', 'truncated unparseable',
     'a question of its own, then the second call cut inside its arguments'),
    ('dedc', 11, 'unparseable', 'format_violation prompt_echo truncated unparseable',
     'a question of its own, then `row_1 := f1` cut before its arguments; complete assignments among prose'),
    ('dedc', 12, 'unparseable', 'format_violation prompt_echo truncated unparseable',
     'a question of its own, then assignments cut at `value`; prose before them'),
    ('dedc', 13, 'unparseable', 'format_violation prompt_echo truncated unparseable',
     'repeats the test question, assignments cut at `f1`; prose before them'),
    ('dedc', 14, 'unparseable', 'prompt_echo truncated unparseable',
     'repeats the test question, then a call cut inside its arguments'),
    ('dedc', 15, 'unparseable', 'prompt_echo truncated unparseable',
     'a question of its own, then a call cut inside its arguments'),
    ('dedc', 16, 'wrong', 'format_violation incorrect_meaning omission primitive_fiction truncated',
     "a question of its own with a complete answer (`result := value_1;`), then the next question: the authors' "
     "checker skips the prose segments and judges that result, the answer to the wrong question"),
    ('dedc', 17, 'unparseable', 'prompt_echo truncated unparseable',
     'repeats the test question, then a call cut inside its arguments'),
    ('dedc', 18, 'unparseable', 'prompt_echo truncated unparseable',
     'a question of its own, then a call cut inside its arguments'),
    ('dedc', 19, 'unparseable', 'prompt_echo truncated unparseable',
     'repeats the test question, then a call cut inside its arguments'),
    ('dedc', 20, 'unparseable', 'truncated unparseable',
     'a question of its own, then a call cut inside its arguments'),
    ('logic', 1, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 2, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 3, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 4, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 5, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 6, 'unparseable', 'prompt_echo truncated unparseable',
     "step 1 echoes its prompt until the cap; step 2 echoes the step-1 task with 'propositional logic' dropped, then the vocabulary, then the task again: no formula"),
    ('logic', 7, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 8, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 9, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 10, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt until the cap; step 2 echoes the NL->FS task (with [FORMULA] for [NL DESCRIPTION]), then drifts into the step-1 task: no formula'),
    ('logic', 11, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 12, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 13, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 14, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt until the cap; step 2 echoes the NL->FS task (with [FORMULA] for [NL DESCRIPTION]), then drifts into the step-1 task: no formula'),
    ('logic', 15, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'step 1 writes `[FORMULA]` and one clause conjoined to itself until the cap (a loop); step 2 echoes the NL->FS prompt: no formula'),
    ('logic', 16, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 17, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 18, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 19, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt (task, vocabulary, the formula) until the cap; step 2 echoes its own prompt, which carries that echo: the whole reply is no formula, nothing is read out of it'),
    ('logic', 20, 'unparseable', 'prompt_echo truncated unparseable',
     'step 1 echoes its prompt until the cap; step 2 echoes the NL->FS task (with [FORMULA] for [NL DESCRIPTION]), then drifts into the step-1 task: no formula'),
    ('rgp', 1, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 2, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 3, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 4, 'unparseable', 'no_program prompt_echo repetition_loop truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own then `..` rows looping until the cap: no python block, so no program'),
    ('rgp', 5, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 6, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 7, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 8, 'unparseable', 'no_program prompt_echo repetition_loop truncated',
     'repeats the task sentence, then grids written as inputs, the same four-grid sample three times until the cap: no python block'),
    ('rgp', 9, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 10, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 11, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 12, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 13, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 14, 'unparseable', 'no_program prompt_echo repetition_loop truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own then `..*`/`..**` rows looping until the cap: no python block, so no program'),
    ('rgp', 15, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 16, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 17, 'unparseable', 'no_program prompt_echo repetition_loop truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own then `*..` rows looping until the cap: no python block, so no program'),
    ('rgp', 18, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 19, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('rgp', 20, 'unparseable', 'no_program prompt_echo truncated',
     'repeats the task sentence, then Input/Output samples with grids of its own until the cap: no python block, so no program'),
    ('compost', 1, 'unparseable', 'other_script prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding Japanese letters, looped until the cap: no query (another script)'),
    ('compost', 2, 'unparseable', 'other_script prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding Chinese letters and `user`, looped until the cap: no query (another script)'),
    ('compost', 3, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding the Dutch word `staan`, looped until the cap: no query'),
    ('compost', 4, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding the Vietnamese word `quân` (Latin script, not flagged), looped until the cap: no query'),
    ('compost', 5, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding the French word `prochain`, looped until the cap: no query'),
    ('compost', 6, 'unparseable', 'repetition_loop truncated unparseable',
     "a question of its own (not the prompt's) and `SPARQL: staanmodel`, looped until the cap: no query"),
    ('compost', 7, 'unparseable', 'other_script prompt_echo truncated unparseable',
     'the system prompt and the question echoed twice with `SPARQL:行く` (Japanese): no query'),
    ('compost', 8, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding the French word `prochain`, looped until the cap: no query'),
    ('compost', 9, 'unparseable', 'other_script repetition_loop truncated unparseable',
     'a question of its own and `SPARQL:行く` lines (Japanese), looped until the cap: no query'),
    ('compost', 10, 'unparseable', 'prompt_echo truncated unparseable',
     'the system prompt and the question echoed, twice over, until the cap: no query'),
    ('compost', 11, 'unparseable', 'prompt_echo truncated unparseable',
     'the system prompt and the question echoed, twice over, until the cap: no query'),
    ('compost', 12, 'unparseable', 'repetition_loop truncated unparseable',
     'a question of its own and `SPARQL:なた`, looped until the cap; `なた` is two letters, under the three-letter run the script tag needs'),
    ('compost', 13, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding `mendatanguser`, looped until the cap: no query'),
    ('compost', 14, 'unparseable', 'prompt_echo truncated unparseable',
     'the system prompt and the question echoed, twice over, until the cap: no query'),
    ('compost', 15, 'unparseable', 'prompt_echo repetition_loop truncated unparseable',
     'the test question and a `SPARQL:` line holding `?,?,`, looped until the cap: no query'),
    ('compost', 16, 'unparseable', 'prompt_echo truncated unparseable',
     'the system prompt and the question echoed, twice over, until the cap: no query'),
    ('compost', 17, 'unparseable', 'other_script prompt_echo truncated unparseable',
     'the system prompt and the question echoed with a Korean syllable (another script): no query'),
    ('compost', 18, 'unparseable', 'repetition_loop truncated unparseable',
     'a question of its own and `SPARQL: mendatanguser`, looped until the cap: no query'),
    ('compost', 19, 'unparseable', 'repetition_loop truncated unparseable',
     'a question of its own and `SPARQL: mendatang`, looped until the cap: no query'),
    ('compost', 20, 'unparseable', 'prompt_echo truncated unparseable',
     'the system prompt and the question echoed, twice over, until the cap: no query'),
]


def replies(engine: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"{engine}.jsonl").read_text(encoding="utf-8").splitlines()]


def corpus(engine: str):
    spec = CORPUS[engine]
    e = get_engine(engine)
    settings = parse_settings(e.settings_type, spec["settings"])
    return e, settings, e.items(settings, spec["seed"])[: spec["n"]]


def test_the_table_has_one_row_per_reply():
    assert len(TABLE) == 100
    assert Counter(row[0] for row in TABLE) == {engine: 20 for engine in ENGINES}
    for engine in ENGINES:
        assert sorted(n for e, n, *_ in TABLE if e == engine) == list(range(1, 21))
        assert [r["id"] for r in replies(engine)] == [i.id for i in corpus(engine)[2]]


@pytest.mark.parametrize("engine", ENGINES)
def test_each_real_reply_keeps_the_verdict_and_tags_of_its_row(engine):
    e, settings, items = corpus(engine)
    records = replies(engine)
    changed = []
    for _, n, status, tags, why in (row for row in TABLE if row[0] == engine):
        record, item = records[n - 1], items[n - 1]
        verdict = e.score(item, record["outputs"], settings, with_views=False, finish_reasons=record["finish_reasons"])
        got = (verdict.status, " ".join(sorted({t.code for t in verdict.tags})))
        if got != (status, " ".join(sorted(tags.split()))):
            changed.append(f"{engine} #{n} ({item.id}): the table says {status} [{tags}] ({why}); "
                           f"the scorer now says {got[0]} [{got[1]}]")
    assert not changed, "a scorer changed its verdict on real replies:\n" + "\n".join(changed)


def test_no_logic_round_trip_is_read_out_of_prose():
    """The issue's echoes ("[TASK] Your task is ...", "Propositions: x1, x2, x3", a formula, junk)
    are unparseable; leniently, only a whole line of the reply may be read as the formula."""
    e, settings, items = corpus("logic")
    for record, item in zip(replies("logic"), items):
        reply = record["outputs"][1]
        verdict = e.score(item, record["outputs"], settings)
        if verdict.status == "unparseable":
            assert "Round-trip formula" not in {v.title for v in verdict.views}, item.id
        lenient = read_formula(reply, frozenset(), lenient=True)
        if isinstance(lenient, Reading) and lenient.removed:
            assert any(lenient.source in (line.strip(), line.strip().rstrip(".")) for line in reply.splitlines()), \
                (item.id, lenient.source)


@pytest.mark.parametrize("engine", ["logic", "robogrid", "dedc"])
def test_the_replay_files_replay_through_the_cli_to_the_table(engine):
    spec = CORPUS[engine]
    settings = [arg for pair in spec["settings"] for arg in ("-s", pair)]
    done = subprocess.run([sys.executable, "-m", "n2f_tui", "run", engine, "-m", f"replay:{DATA / (engine + '.jsonl')}",
                           "-n", str(spec["n"]), "--seed", str(spec["seed"]), *settings, "--json", "-q"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    rows = [row for row in TABLE if row[0] == engine]
    assert summary["counts"] == {**{s: 0 for s in summary["counts"]}, **Counter(row[2] for row in rows)}
    assert summary["tags"] == dict(Counter(code for row in rows for code in set(row[3].split())))
    reasons = [r for record in replies(engine) for r in record["finish_reasons"] if r]
    assert summary["replies"]["truncated"] == reasons.count("length")
