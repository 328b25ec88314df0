"""rgp tags: the paper's three compositionality profiles and what can go wrong on the way.

Profiles (paper section 5, from the two axes of its scatter plot): T1 compressed and
correct, T2 enumerated and correct, T3 compressed but wrong. "Compressed" means
L(P+) <= ``compressed_max`` (default 180, midway between Ls = 40 and Lz = 320) and
"correct" means E(P) <= ``errors_max`` (default 0); an enumerated and wrong program
has no profile. The thresholds are settings and the report prints them.
"""

from __future__ import annotations

from typing import Sequence

from engines.core import Tag, TagType
from engines.taxonomy import Taxonomy, format_violation, unparseable

TAXONOMY = Taxonomy((
    TagType("T1", "T1: compressed and correct",
            "Low L(P+) and low E(P): the program captures the components and reproduces the samples.", "profile"),
    TagType("T2", "T2: enumerated and correct",
            "High L(P+) and low E(P): the program lists the samples (or large parts) instead of a rule.", "profile"),
    TagType("T3", "T3: compressed but wrong",
            "Low L(P+) and high E(P): a short rule that gets samples wrong.", "profile"),
    TagType("no_program", "No program",
            "No program could be extracted from the reply (no python code block, no dashed block).", "program"),
    TagType("runtime_error", "Runtime error",
            "The program crashed on some samples: an exception, a non-zero exit, a signal, or a limit "
            "of the sandbox (memory, output size, file size).", "execution"),
    TagType("timeout", "Timeout",
            "The program did not finish within the wall-clock limit (or ran out of CPU time) on some samples.",
            "execution"),
    unparseable("The extracted program is not valid Python.", "program"),
    format_violation("The program was not in a ```python block; it was found by the paper's fallback patterns.", "program"),
))
LABELS = TAXONOMY.labels
PROFILES = ("T1", "T2", "T3")


tag = TAXONOMY.tag


def profile(table_length: int, errors: int, compressed_max: float, errors_max: int) -> str:
    """T1/T2/T3, or "" for an enumerated program that is also wrong."""
    compressed = table_length <= compressed_max
    correct = errors <= errors_max
    if compressed:
        return "T1" if correct else "T3"
    return "T2" if correct else ""


def profile_tag(code: str, table_length: int, errors: int, compressed_max: float, errors_max: int) -> Tag:
    size = "<=" if table_length <= compressed_max else ">"
    wrong = "<=" if errors <= errors_max else ">"
    return tag(code, f"L(P+) = {table_length} {size} {compressed_max:g}, E(P) = {errors} {wrong} {errors_max}")


def execution_tags(failures: Sequence[tuple[int, str, str]], total: int) -> list[Tag]:
    """Tags for failed samples given as (sample number, kind, detail), kind timeout or crash."""
    tags = []
    for code, kind in (("timeout", "timeout"), ("runtime_error", "crash")):
        hits = [(n, detail) for n, k, detail in failures if k == kind]
        if hits:
            numbers = ", ".join(str(n) for n, _ in hits[:8]) + (" ..." if len(hits) > 8 else "")
            tags.append(tag(code, f"{len(hits)} of {total} samples (#{numbers}): {hits[0][1]}"))
    return tags
