"""Structural comparison of two basic graph patterns, up to variable names.

Used to align the output's triples with the gold's (tags, views) and, for official
items without an endpoint, as the verdict itself: the output is structurally correct
when its triple patterns map one-to-one onto the gold's under a renaming of variables
that sends its single projected variable to ``?result``.
"""

from __future__ import annotations

from engines.compost.parse import Parsed

Triple = tuple[str, str, str]
# Constructs that change the answer set beyond the basic graph pattern.
SEMANTIC_FEATURES = {"FILTER", "OPTIONAL", "UNION", "MINUS", "BIND", "VALUES", "GRAPH", "GROUP", "HAVING",
                     "COUNT", "NOT", "EXISTS", "ASK", "CONSTRUCT", "DESCRIBE", "LIMIT", "OFFSET"}
MAX_STEPS = 20_000  # backtracking budget: gold patterns have at most ~15 triples


def _is_var(term: str) -> bool:
    return term.startswith("?")


def mapping(output: list[Triple], gold: list[Triple], fixed: dict[str, str] | None = None) -> dict[str, str] | None:
    """A bijective variable renaming sending the output's triple set onto the gold's, or None."""
    out, want = sorted(set(output)), set(gold)
    if len(out) != len(want):
        return None
    steps = 0

    def bind(triple: Triple, cand: Triple, env: dict[str, str], used: set[str]) -> bool:
        """Extend ``env``/``used`` so ``triple`` maps onto ``cand``; False when it cannot."""
        for a, b in zip(triple, cand):
            if _is_var(a) != _is_var(b):
                return False
            if not _is_var(a):
                if a != b:
                    return False
            elif a in env:
                if env[a] != b:
                    return False
            elif b in used:
                return False
            else:
                env[a] = b
                used.add(b)
        return True

    def search(k: int, env: dict[str, str], used: set[str], free: set[Triple]) -> dict[str, str] | None:
        nonlocal steps
        steps += 1
        if steps > MAX_STEPS:
            return None
        if k == len(out):
            return env
        for cand in sorted(free):
            e, u = dict(env), set(used)
            if bind(out[k], cand, e, u):
                found = search(k + 1, e, u, free - {cand})
                if found is not None:
                    return found
        return None

    start = dict(fixed or {})
    return search(0, start, set(start.values()), want)


def isomorphic(parsed: Parsed, gold: list[Triple]) -> bool:
    """Same projection (one variable, playing ``?result``) and the same pattern up to renaming."""
    if len(parsed.projection) != 1 or parsed.projection[0] == "*" or parsed.features & SEMANTIC_FEATURES:
        return False
    return mapping(parsed.triples, gold, {parsed.projection[0]: "?result"}) is not None


def align(output: list[Triple], gold: list[Triple]) -> list[tuple[Triple | None, Triple | None]]:
    """Pairs (gold triple, output triple) matched greedily: same predicate, shared constants, same shape."""
    remaining = list(output)
    pairs: list[tuple[Triple | None, Triple | None]] = []

    def affinity(g: Triple, o: Triple) -> int:
        score = 4 * (g[1] == o[1])
        score += sum(2 for a, b in ((g[0], o[0]), (g[2], o[2])) if a == b and not _is_var(a))
        score += sum(1 for a, b in ((g[0], o[2]), (g[2], o[0])) if a == b and not _is_var(a))
        score += sum(1 for a, b in ((g[0], o[0]), (g[2], o[2])) if _is_var(a) and _is_var(b))
        return score

    for g in gold:
        best = max(remaining, key=lambda o: affinity(g, o), default=None)
        if best is not None and affinity(g, best) > 0:
            remaining.remove(best)
            pairs.append((g, best))
        else:
            pairs.append((g, None))
    pairs.extend((None, o) for o in remaining)
    return pairs
