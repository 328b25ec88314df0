"""DEDC knobs (`-s key=value`), with the paper's base evaluation as the defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from engines.core import extract_field


@dataclass(frozen=True)
class DedcSettings:
    repeat: int = field(default=1, metadata={"min": 1, "max": 1000,
                        "help": "instantiate each of the 323 schemes this many times with fresh parameters"})
    primitives: bool = field(default=False, metadata={
        "help": "add the primitive demonstrations (the paper's P_c setting)"})
    gap: str = field(default="base", metadata={"choices": ("base", "0", "100"),
                     "help": "compositional gap: base (as sampled, ~70%), 0 (none) or 100 (every item)"})
    names: str = field(default="opaque", metadata={"choices": ("opaque", "anomalous", "cross"),
                       "help": "primitive names: opaque f0..f9, anomalous or cross-mapping (Figure 4)"})
    shots: int = field(default=3, metadata={"min": 1, "max": 8, "help": "demonstrations per item (paper: 3)"})
    dataset: str = field(default="", metadata={
        "help": "path to an official DEDC .jsonl file (its .full.jsonl companion is used when present)"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "help": "sampling temperature"})
    max_tokens: int = field(default=256, metadata={"min": 1, "max": 32768, "help": "reply length cap"})
    extract: str = extract_field()  # strict: nothing but assignments and fences (engines.dedc.parse)
