"""The shared reply tags: each fact about a reply found with evidence naming its span, and not found where absent."""

from __future__ import annotations

from engines import get_engine, replies
from engines.core import parse_settings
from engines.replies import Reply, observe, reply_tags

PROMPT = ("[TASK]\nYour task is to convert the propositional logic formula appearing after [FORMULA] into a "
          "natural language description.\n\n[VOCABULARY]\nPropositions: x1, x2, x3\n\n[FORMULA]\n(x1 ∨ x2) ∧ x3")


def codes(reply: Reply) -> list[str]:
    return [code for code, _ in observe(reply)]


def test_a_clean_reply_has_no_reply_tags():
    assert codes(Reply("(x1 ∨ x2) ∧ x3", PROMPT, "stop")) == []
    assert codes(Reply("x1 holds or x2 holds, and x3 holds as well.", PROMPT)) == []


def test_empty_and_truncated_replies():
    assert codes(Reply("  \n", PROMPT, "stop")) == ["empty_reply"]
    found = dict(observe(Reply("x1 and x2 and", PROMPT, "length")))
    assert set(found) == {"truncated"}
    assert "finish reason length" in found["truncated"] and "`x1 and x2 and`" in found["truncated"]


def test_an_echoed_prompt_names_the_first_echoed_line():
    echo = PROMPT.split("\n\n[FORMULA]")[0] + "\n(x1 ∨ x2) ∧ x3"
    found = dict(observe(Reply(echo, PROMPT, "stop")))
    assert set(found) == {"prompt_echo"}
    assert "from `Your task is to convert the propositional" in found["prompt_echo"]


def test_a_short_line_shared_with_the_prompt_is_not_an_echo():
    # "Propositions: x1, x2, x3" is 24 characters: quoting it in a longer answer is no echo
    reply = "Propositions: x1, x2, x3\nThe formula says that x3 holds and at least one of x1 and x2 holds too."
    assert codes(Reply(reply, PROMPT)) == []


def test_a_reply_echoing_no_line_is_not_shingled(monkeypatch):
    """The similarity (shingles of the whole prompt) is worked out only when it decides or is quoted."""
    shingled: list[str] = []
    monkeypatch.setattr(replies, "_shingles", lambda text: shingled.append(text) or set())
    reply = "The formula says that x3 holds and at least one of x1 and x2 holds too, as the question asks."
    assert codes(Reply(reply, PROMPT)) == []
    assert shingled == []
    echo = PROMPT.split("\n\n[FORMULA]")[0]
    assert codes(Reply(echo, PROMPT)) == ["prompt_echo"]
    assert shingled  # quoted in the evidence


def test_a_loop_names_the_repeated_span_and_where_it_starts():
    reply = "The answer is " + "x1 ∧ x2 " * 12
    (code, evidence), = observe(Reply(reply, PROMPT, "stop"))
    assert code == "repetition_loop"
    assert "`x1 ∧ x2` repeated 12 times" in evidence and "from character 14 to the end" in evidence  # the space before it opens the unit


def test_a_short_loop_counts_only_when_it_runs_into_the_cap():
    reply = "first, " + "do it again, " * 5
    assert codes(Reply(reply, PROMPT, "stop")) == []
    assert codes(Reply(reply, PROMPT, "length")) == ["truncated", "repetition_loop"]


def test_another_script_names_its_words():
    found = dict(observe(Reply("x1 ∧ x2 vertreten тельномmodel", PROMPT)))
    assert set(found) == {"other_script"}
    assert "Cyrillic (`тельномmodel`)" in found["other_script"]


def test_a_script_the_prompt_uses_is_not_foreign():
    assert codes(Reply("Ответ: x1", "Переведите формулу: x1")) == []


def test_tags_number_the_steps_and_map_codes():
    tags = reply_tags([Reply("", PROMPT), Reply("ok then", PROMPT, "length")], {"truncated": "cut"}, {"cut": "Cut"})
    assert [(t.code, t.label) for t in tags] == [("empty_reply", "Empty reply"), ("cut", "Cut")]
    assert tags[0].evidence.startswith("step 1: ") and tags[1].evidence.startswith("step 2: ")


def test_robogrid_files_an_echoed_prompt_under_autoregressive_echoing():
    engine = get_engine("robogrid")
    settings = parse_settings(engine.settings_type, ["count=1"])
    item = engine.items(settings, 0)[0]
    prompt = engine.next_step(item, settings, []).messages[0].content
    verdict = engine.score(item, [prompt], settings, with_views=False, finish_reasons=["length"])
    found = {t.code: t.evidence for t in verdict.tags}
    assert verdict.status == "unparseable"
    assert "repeat the prompt" in found["autoregressive_echoing"]
    assert "truncated" in found and "prompt_echo" not in found


def test_a_reply_is_compared_with_the_prompt_the_run_sent():
    """A run passes its trace's prompts (``StepTrace.sent_prompts``): the verdict is the one the rebuilt
    prompt gives, and it is that prompt, not a rebuilt one, that an echo is compared with."""
    from sessions.run.steps import StepTrace

    engine = get_engine("dedc")
    settings = parse_settings(engine.settings_type, [])
    item = engine.items(settings, 0)[0]
    step = engine.next_step(item, settings, [])
    echo = step.messages[0].content
    trace = StepTrace(outputs=[echo], steps=[{"name": step.name}],
                      prompts=[{"step": step.name, "messages": [m.to_json() for m in step.messages]}])
    rebuilt = engine.score(item, [echo], settings, with_views=False)
    sent = engine.score(item, [echo], settings, with_views=False, prompts=trace.sent_prompts())
    assert [t.to_json() for t in sent.tags] == [t.to_json() for t in rebuilt.tags]
    assert "prompt_echo" in {t.code for t in sent.tags}
    other = engine.score(item, [echo], settings, with_views=False, prompts=["a prompt of other words entirely"])
    assert "prompt_echo" not in {t.code for t in other.tags}
    tool_step = StepTrace(outputs=[echo], steps=[{"name": "run", "tool": "sandbox"}], prompts=[{"step": "run", "messages": []}])
    assert tool_step.sent_prompts() == [None]


def test_the_shared_codes_are_not_in_any_engines_own_taxonomy():
    shared = {t.code for t in replies.TAXONOMY}
    for name in ("dedc", "logic", "compost", "robogrid", "rgp"):
        assert not shared & {t.code for t in get_engine(name).taxonomy()}, name


def test_an_echo_that_drifts_after_its_opening_still_counts():
    long_line = "Your task is to convert the propositional logic formula appearing after [FORMULA] into a"
    found = dict(observe(Reply(long_line + " poem about the sea\n" + long_line + " song", PROMPT, "length")))
    assert "2 line(s)" in found["prompt_echo"]


def test_the_reading_is_recorded_and_reported_and_lenient_stays_beside_the_strict_figures():
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]

    def run(*extra: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "n2f_tui", "run", "logic", "-m", "sim:error=format_violation",
                               "-n", "6", "-s", "dataset=random", *extra, "--json", "-q"],
                              capture_output=True, text=True, cwd=root, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    strict, lenient = run(), run("-s", "extract=lenient")
    assert strict["settings"]["extract"] == "strict" and lenient["settings"]["extract"] == "lenient"
    assert any(n.startswith("extract=strict") for n in strict["notes"]) and "lenient_accuracy" not in strict["metrics"]
    # prose around the right formula: the paper's reading fails every item, the lenient one finds them right
    assert strict["accuracy"] == lenient["accuracy"] == 0.0 and lenient["counts"]["unparseable"] == 6
    assert lenient["metrics"]["lenient_accuracy"] == 1.0
    assert any(n.startswith("extract=lenient") for n in lenient["notes"])
