"""CompoST knobs (`-s key=value`): generated items by default, the official files on request."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CompostSettings:
    level: str = field(default="easy", metadata={"choices": ("easy", "medium", "hard"),
                       "help": "dataset difficulty: share of base-pattern edges in train (75/50/25%); "
                               "generated items only (an official file carries its own)"})
    split: str = field(default="all", metadata={"choices": ("all", "train", "val", "test"),
                       "help": "which split's items to run"})
    task: str = field(default="classic", metadata={"choices": ("classic", "self-contained"),
                      "help": "self-contained: an edge-set cover of the target from train is given as shots"})
    shots: int = field(default=0, metadata={"min": 0, "max": 10,
                       "help": "classic few-shot: train items shown before the question (0 = zero-shot)"})
    bases: int = field(default=3, metadata={"min": 1, "max": 100,
                       "help": "base pattern instances per shape (4 shapes; the paper has ~18); generated items only"})
    extract: str = field(default="strict", metadata={"choices": ("strict", "lenient"),
                         "help": "strict (the paper's): only a leading ```sparql and trailing ``` are removed and "
                                 "unbound prefixes are invalid; lenient: also a query inside prose, and the usual "
                                 "DBpedia prefixes (dbpedia:, dbpprop:...) undeclared, for exploratory runs"})
    dataset: str = field(default="", metadata={
        "help": "path to an official compositionality_subgraph_*.json file (scored structurally without endpoint)"})
    endpoint: str = field(default="", metadata={
        "help": "URL of a SPARQL 1.1 endpoint to run queries on instead of the bundled graph"})
    lexicon: str = field(default="", metadata={"help": "directory of Lemon lexicon Turtle files to add"})
    timeout: float = field(default=5.0, metadata={"min": 0.1, "max": 600.0, "help": "seconds per query"})
    row_cap: int = field(default=10000, metadata={"min": 1, "max": 1_000_000, "help": "rows kept per query"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "help": "sampling temperature"})
    max_tokens: int = field(default=512, metadata={"min": 1, "max": 32768, "help": "reply length cap"})
