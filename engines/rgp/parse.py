"""From the model's reply to the program (released ``program_extract.py``), and its syntax.

Extraction, as the authors do it (after removing zero-width spaces): the last
```` ```python ... ``` ```` block; failing that, the last ``Begin Code`` + dashes block;
failing that, the last text between two runs of at least six dashes. No match (or only
whitespace) means no program. The block's text is taken as is. That is the one reading:
it is the authors' own, so this engine has no ``extract`` setting.

The syntax check only parses (``ast``); nothing here ever runs the program.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

from engines.parsing import ParseFailure, caret_under

PATTERNS = (
    ("python code block", re.compile(r"```python(.*?)```", re.DOTALL)),
    ("Begin Code block", re.compile(r"Begin Code\n-{6,}(.*?)-{6,}", re.DOTALL)),
    ("dashed block", re.compile(r"-{6,}(.*?)-{6,}", re.DOTALL)),
)


@dataclass(frozen=True)
class Extraction:
    program: str  # "" when nothing could be extracted
    source: str  # which pattern matched, or "" for none


def extract_program(reply: str) -> Extraction:
    text = reply.replace("\u200b", "")
    for name, pattern in PATTERNS:
        found = pattern.findall(text)
        if found:
            program = found[-1]
            return Extraction(program, name) if program.strip() else Extraction("", name)
    return Extraction("", "")


KEPT_VERDICTS = 1024  # programs whose syntax verdict is kept: more than the items a run has in flight


def syntax_problem(program: str) -> ParseFailure | None:
    """Where the program fails to parse as Python, or None when it parses.

    An item asks this of its program three times (choosing the sandbox step, again when the run
    rebuilds the prompts of its replies, and when scoring): the verdict is kept, keyed by a digest
    of the text (so a kept verdict holds no program), and the program is parsed once. A verdict of
    the recursion or memory limit depends on where it is asked and is not kept."""
    key = hashlib.blake2b(program.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    verdict = _verdicts.pop(key, _UNKNOWN)
    if verdict is _UNKNOWN:
        verdict, lasting = _syntax_verdict(program)
        if not lasting:
            return verdict
    _verdicts[key] = verdict  # the most recent last
    while len(_verdicts) > KEPT_VERDICTS:
        _verdicts.pop(next(iter(_verdicts)), None)
    return verdict


_UNKNOWN = ParseFailure("", 0, 0, "")  # a key's absence (None is a verdict: the program parses)
_verdicts: dict[bytes, ParseFailure | None] = {}


def _syntax_verdict(program: str) -> tuple[ParseFailure | None, bool]:
    """The verdict, and whether it holds wherever it is asked."""
    try:
        ast.parse(program)
    except SyntaxError as exc:
        line, column = exc.lineno or 0, exc.offset or 0
        source = program.splitlines()[line - 1] if 0 < line <= len(program.splitlines()) else (exc.text or "")
        return ParseFailure(exc.msg or "invalid syntax", line, column, caret_under(source.rstrip(), max(column, 1))), True
    except ValueError as exc:  # null bytes
        return ParseFailure(f"cannot be parsed: {type(exc).__name__}: {exc}", 0, 0, ""), True
    except (RecursionError, MemoryError) as exc:  # absurd nesting
        return ParseFailure(f"cannot be parsed: {type(exc).__name__}: {exc}", 0, 0, ""), False
    return None, True
