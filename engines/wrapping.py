"""The shapes a simulated reply takes around its answer: a code fence, or prose before and after.

Each engine names its own shapes (``{text}`` the answer, ``{before}`` / ``{after}`` one of
its prose lines); only the prose a shape uses is drawn from the random source, so a
simulated run is reproducible from its seed.
"""

from __future__ import annotations

import random
from typing import Sequence


def wrap(text: str, rng: random.Random, shape: str, before: Sequence[str] = (), after: Sequence[str] = ()) -> str:
    opening = rng.choice(before) if "{before}" in shape else ""
    closing = rng.choice(after) if "{after}" in shape else ""
    return shape.format(text=text, before=opening, after=closing)
