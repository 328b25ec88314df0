"""rgp knobs (`-s key=value`), with the paper's protocol as the defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

# setting code -> the paper's name; Table 1 holds the first four, Table 2 the last two
SETTING_LABELS = {
    "h": "Horizontal",
    "b": "Block",
    "v": "Vertical",
    "r": "Random",
    "ri": "RI(H)",
    "hr": "SC(H+R)",
}
SETTINGS = tuple(SETTING_LABELS)


@dataclass(frozen=True)
class RgpSettings:
    setting: str = field(default="all", metadata={
        "choices": ("all", *SETTINGS),
        "help": "h Horizontal, v Vertical, b Block, r Random, ri RI(H) index shuffle, "
                "hr SC(H+R) setting combination, or all six"})
    count: int = field(default=30, metadata={"min": 1, "max": 100_000, "help": "instances per setting (paper: 30)"})
    dataset: str = field(default="", metadata={
        "help": "an official k=4_u=2_d=16_type=T.jsonl file, or a folder holding them (with their .meta.jsonl)"})
    timeout: float = field(default=5.0, metadata={"min": 0.1, "max": 60.0,
                           "help": "wall-clock limit per program run, seconds (paper: 5)"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "help": "sampling temperature"})
    max_tokens: int = field(default=8192, metadata={"min": 1, "max": 131072, "help": "reply length cap"})
    compressed_max: float = field(default=180.0, metadata={
        "min": 40.0, "max": 320.0, "help": "profiles: L(P+) at or below this is 'compressed' (default: midway 40..320)"})
    errors_max: int = field(default=0, metadata={
        "min": 0, "max": 16, "help": "profiles: E(P) at or below this is 'correct'"})
