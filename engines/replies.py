"""What real models do to a reply, whatever the task: facts about the text, shared by every engine.

A small local model (and a large one on a bad day) answers with the prompt echoed back, a
phrase looping until the reply cap, nothing at all, a reply cut at ``max_tokens``, or words
in another script. None of these is an error of the benchmark's own taxonomy, and none of
them changes a verdict (the engine's parser and scorer decide that); they are tagged so
that a reader sees at once *why* a reply failed, with evidence naming the span:

* ``prompt_echo``: lines of the reply are lines of the prompt, verbatim or opening with the
  same ``ECHO_OPENING`` characters as one, adding up to ``ECHO_MIN_CHARS`` or more and to at
  least ``ECHO_MIN_SHARE`` of the reply; the evidence also gives the whole reply's
  similarity to the prompt (``echo_similarity``). An engine whose answers never restate
  the prompt (RoboGrid's programs) also classes a reply as an echo by that similarity
  alone (``echo_evidence(by_similarity=True)``): at least ``ECHO_SIMILARITY`` of the reply's
  distinct ``ECHO_SHINGLE``-token sequences, read in lower case with whitespace ignored,
  occur in the prompt, which sees an echo that changes a word here and there. It is not the
  shared rule because a right answer may restate its prompt (a round-trip formula the
  description quoted, a DEDC answer's steps beside its demonstrations);
* ``repetition_loop``: the reply ends in one span (``LOOP_MIN_UNIT`` to ``LOOP_MAX_UNIT``
  characters) repeated back to back ``LOOP_MIN_REPEATS`` times or more, ``LOOP_CUT_REPEATS``
  when the reply was cut at the cap: degenerate decoding loops until the reply ends, so the
  end is where a loop is looked for (a block written twice mid-program is the engine's
  own structural tagger's business);
* ``empty_reply``: nothing but whitespace;
* ``truncated``: the backend reported finish reason ``length`` (the reply hit ``max_tokens``);
* ``other_script``: a run of ``SCRIPT_MIN_RUN`` or more letters of a script the prompt does
  not use (Cyrillic words in a reply to an English prompt). Another language in the same
  script (German in Latin letters) is not detected: that needs a language model of its own.

Every reader is bounded (``out_of_bounds``): a reply longer than ``MAX_REPLY_CHARS`` or with
brackets nested deeper than ``MAX_NESTING`` is judged ``unparseable`` with the tag
``oversized_reply`` saying which bound and by how much, without any parser, scorer,
tagger or view reading it (``Engine.score``), so no reply can exhaust a recursion, the
CPU or the memory of a run. Both checks cost one pass over the text (a 100 MB reply is
measured by its length alone); no answer of the five benchmarks comes near either bound.

An engine whose taxonomy has a place for one of these maps it there (``Engine.reply_tags``:
RoboGrid files prompt echoes and loops under its ``autoregressive_echoing``); the others
carry the codes below. Tool steps (a program run, a SPARQL query) are not replies and are
never looked at.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from engines.core import Tag, TagType
from engines.parsing import shorten

PROMPT_ECHO = "prompt_echo"
REPETITION_LOOP = "repetition_loop"
EMPTY_REPLY = "empty_reply"
TRUNCATED = "truncated"
OTHER_SCRIPT = "other_script"
OVERSIZED_REPLY = "oversized_reply"

MAX_REPLY_CHARS = 1_000_000  # a reply (or a tool's output) longer than this is not read
MAX_NESTING = 64  # brackets ( [ { nested deeper than this are not read: every recursion stays far from Python's limit

TAXONOMY: tuple[TagType, ...] = (
    TagType(PROMPT_ECHO, "Prompt echo", "The reply repeats lines of the prompt verbatim.", "reply"),
    TagType(REPETITION_LOOP, "Repetition loop", "One span of the reply repeated back to back many times.", "reply"),
    TagType(EMPTY_REPLY, "Empty reply", "The model returned nothing but whitespace.", "reply"),
    TagType(TRUNCATED, "Truncated at the cap", "The reply was cut at max_tokens (finish reason length).", "reply"),
    TagType(OTHER_SCRIPT, "Other script", "Words in a script the prompt does not use (e.g. Cyrillic in an "
            "English task).", "reply"),
    TagType(OVERSIZED_REPLY, "Over the readers' bounds", f"The reply is longer than {MAX_REPLY_CHARS:,} characters or "
            f"nests brackets deeper than {MAX_NESTING}: judged unparseable without being read.", "reply"),
)
LABELS = {t.code: t.label for t in TAXONOMY}

ECHO_MIN_LINE = 16  # characters: shorter lines ("Answer:", "x1 ∧ x2") are too common to call an echo
ECHO_MIN_CHARS = 60
ECHO_OPENING = 40  # a longer line opening like a prompt line is an echo that drifted (or was cut) later on
ECHO_MIN_SHARE = 0.3
ECHO_SHINGLE = 4  # tokens per compared sequence
ECHO_SIMILARITY = 0.6  # share of the reply's sequences found in the prompt that makes it an echo
ECHO_MIN_TOKENS = 12  # a shorter reply is too short to call an echo by similarity
_ECHO_TOKEN = re.compile(r"\w+|[^\w\s]")
LOOP_MIN_UNIT = 3
LOOP_MAX_UNIT = 200
LOOP_MIN_REPEATS = 8
LOOP_CUT_REPEATS = 3
LOOP_TAIL = 6_000  # characters at the end of a reply searched for a loop (loops run to the end)
SCRIPT_MIN_RUN = 3
_LETTERS = re.compile(r"[^\W\d_]{%d,}" % SCRIPT_MIN_RUN)
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


@dataclass(frozen=True)
class Reply:
    """One model reply and what it answered: the prompt text and the backend's finish reason."""

    text: str
    prompt: str
    finish_reason: str = ""


def out_of_bounds(text: str) -> str:
    """Why ``text`` is beyond what the readers take (its length, or its bracket nesting), or ``""``."""
    if len(text) > MAX_REPLY_CHARS:
        return f"{len(text):,} characters, over the readers' limit of {MAX_REPLY_CHARS:,}: not read"
    depth = nesting(text)
    if depth > MAX_NESTING:
        return f"brackets nested {depth:,} deep, over the readers' limit of {MAX_NESTING}: not read"
    return ""


def nesting(text: str) -> int:
    """How deep ``(``, ``[`` and ``{`` nest in ``text`` (kinds not matched: a bound, not a parse)."""
    opening = text.count("(") + text.count("[") + text.count("{")
    if opening <= MAX_NESTING:
        return opening  # cannot nest deeper than it opens: no scan needed
    depth = deepest = 0
    for ch in _NOT_BRACKETS.sub("", text):
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def reply_tags(replies: Sequence[Reply], mapping: Mapping[str, str] = {}, labels: Mapping[str, str] = {}) -> list[Tag]:
    """The tags of every reply (step numbers in the evidence when there are several), codes mapped."""
    tags: list[Tag] = []
    for number, reply in enumerate(replies, 1):
        where = f"step {number}: " if len(replies) > 1 else ""
        for code, evidence in observe(reply):
            code = mapping.get(code, code)
            tags.append(Tag(code, labels.get(code, LABELS.get(code, code)), where + evidence))
    return tags


def observe(reply: Reply) -> list[tuple[str, str]]:
    """(code, evidence) for each fact about one reply."""
    found: list[tuple[str, str]] = []
    text = reply.text
    cut = reply.finish_reason == "length"
    if not text.strip():
        found.append((EMPTY_REPLY, "the reply is empty" + (" (cut at the cap)" if cut else "")))
    if cut:
        found.append((TRUNCATED, f"cut at max_tokens (finish reason length) after {len(text)} characters, "
                                 f"ending `{shorten(text[-40:], collapse_spaces=True)}`"))
    for check in (_echo, _loop, _script):
        evidence = check(reply, cut)
        if evidence:
            found.append(evidence)
    return found


def _shingles(text: str) -> set[tuple[str, ...]]:
    tokens = _ECHO_TOKEN.findall(text.lower())
    return {tuple(tokens[i:i + ECHO_SHINGLE]) for i in range(len(tokens) - ECHO_SHINGLE + 1)}


def echo_similarity(text: str, prompt: str) -> float | None:
    """The share of the reply's distinct normalised token sequences that occur in the prompt
    (None for a reply of fewer than ``ECHO_MIN_TOKENS`` tokens: too short to tell)."""
    if len(_ECHO_TOKEN.findall(text)) < ECHO_MIN_TOKENS:
        return None
    mine = _shingles(text)
    return len(mine & _shingles(prompt)) / len(mine) if mine else None


def echo_evidence(text: str, prompt: str, by_similarity: bool = False) -> str | None:
    """Why the reply is an echo of the prompt (see ``prompt_echo`` above), or None.

    The similarity is computed only when it decides or is quoted: shingling a prompt with its
    demonstrations is most of the check's cost, and most replies echo no line of it."""
    lines = [line.strip() for line in text.splitlines()]
    # A line is echoed only if its opening is somewhere in the prompt: most replies have no such
    # line, and the prompt's lines are not gathered for them.
    if not by_similarity and not any(line[:ECHO_OPENING] in prompt for line in lines if len(line) >= ECHO_MIN_LINE):
        return None
    prompt_lines = {line.strip() for line in prompt.splitlines() if len(line.strip()) >= ECHO_MIN_LINE}
    openings = {line[:ECHO_OPENING] for line in prompt_lines if len(line) >= ECHO_OPENING}
    echoed = [line for line in lines
              if line in prompt_lines or len(line) >= ECHO_OPENING and line[:ECHO_OPENING] in openings]
    chars = sum(map(len, echoed))
    by_lines = chars >= ECHO_MIN_CHARS and chars >= ECHO_MIN_SHARE * len("".join(text.split()))
    if not (by_lines or by_similarity):
        return None
    similarity = echo_similarity(text, prompt)
    figure = (f"similarity {similarity:.2f} (threshold {ECHO_SIMILARITY:.2f}): that share of the reply's "
              f"{ECHO_SHINGLE}-token sequences occurs in the prompt") if similarity is not None else ""
    if by_lines:
        return (f"{len(echoed)} line(s), {chars} of the reply's {len(text)} characters, repeat the prompt, from "
                f"`{shorten(echoed[0], collapse_spaces=True)}`" + (f"; {figure}" if figure else ""))
    if by_similarity and similarity is not None and similarity >= ECHO_SIMILARITY:
        return f"the whole reply is like the prompt: {figure}"
    return None


def _echo(reply: Reply, cut: bool) -> tuple[str, str] | None:
    evidence = echo_evidence(reply.text, reply.prompt)
    return (PROMPT_ECHO, evidence) if evidence else None


def _loop(reply: Reply, cut: bool) -> tuple[str, str] | None:
    """The longest back-to-back repetition the reply ends with, if it is a loop.

    For each period ``p`` the run of characters equal to the one ``p`` before them is
    measured backwards from the end (a binary search over slice comparisons, so a long
    reply costs microseconds); a unit cut short by the cap is part of the run.
    """
    text = reply.text.rstrip()
    tail = text[-LOOP_TAIL:][::-1]
    best: tuple[int, int] | None = None  # (covered characters, period)
    needed = LOOP_CUT_REPEATS if cut else LOOP_MIN_REPEATS
    for period in range(LOOP_MIN_UNIT, min(LOOP_MAX_UNIT, len(tail) // needed) + 1):  # a longer unit fits fewer times
        if tail[:period] != tail[period:2 * period]:
            continue  # not even twice
        lo, hi = period, len(tail) - period  # the longest l with tail[:l] == tail[period:period + l]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if tail[:mid] == tail[period:period + mid]:
                lo = mid
            else:
                hi = mid - 1
        covered = lo + period
        repeats = covered // period
        if repeats < needed or not tail[:period].strip():
            continue
        if best is None or covered > best[0] + period:  # a multiple of a shorter unit adds nothing
            best = (covered, period)
    if best is None:
        return None
    covered, period = best
    unit = text[len(text) - covered:len(text) - covered + period]
    shown = shorten(unit.strip(), collapse_spaces=True)
    return REPETITION_LOOP, (f"`{shown}` repeated {covered // period} times back to back "
                             f"from character {len(text) - covered + 1} to the end")


def _script(reply: Reply, cut: bool) -> tuple[str, str] | None:
    if reply.text.isascii():
        return None
    allowed = {_script_of(ch) for ch in set(reply.prompt) if ch.isalpha()}
    foreign: dict[str, list[str]] = {}
    for m in _LETTERS.finditer(reply.text):
        scripts = {_script_of(ch) for ch in set(m.group(0))} - allowed
        if scripts:
            foreign.setdefault(sorted(scripts)[0], []).append(m.group(0))
    if not foreign:
        return None
    parts = [f"{script.title()} ({', '.join('`' + w + '`' for w in words[:3])}{', ...' if len(words) > 3 else ''})"
             for script, words in sorted(foreign.items())]
    return OTHER_SCRIPT, "letters of a script the prompt does not use: " + "; ".join(parts)


@lru_cache(maxsize=4096)
def _script_of(ch: str) -> str:
    """The script of a letter from its Unicode name (``CYRILLIC SMALL LETTER TE`` -> ``CYRILLIC``)."""
    name = unicodedata.name(ch, "")
    head = name.split(" ", 1)[0]
    return "CJK" if head in ("CJK", "HIRAGANA", "KATAKANA") else head or "UNKNOWN"
