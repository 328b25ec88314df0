"""The examples every ``n2f`` command's ``--help`` ends with, by command path, in one table.

``add_examples`` walks the parser tree once it is built, so a command added anywhere gets
its examples here; ``tests/test_cli_conventions.py`` fails for a command without them.
"""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("n2f                                  # the inspector (the offline demo on a fresh machine)",
         "n2f run dedc -m sim --name base      # a run headless", "n2f report base", "n2f run --help"),
    "run": ("n2f run dedc -m sim --name base", "n2f run dedc -s primitives=true -n 50 -j 16",
            "n2f run dedc -m openai:gpt-4o-mini --dry-run          # items, prompt size, tokens and cost first",
            "n2f run logic -s dataset=fol -m openai:gpt-4o-mini --max-tokens 200000",
            "n2f run rgp -m openai:MODEL@http://localhost:8000/v1 -q --json > report.json"),
    "items": ("n2f items dedc | head -1", "n2f items dedc -s gap=100 -s names=cross > items.jsonl"),
    "score": ("n2f items dedc | head -1 > item.json && n2f score dedc --item item.json --output reply.txt",),
    "papers": ("n2f papers", "n2f papers compost --json"),
    "runs": ("n2f runs", "n2f runs --json | jq '.[].id'"),
    "report": ("n2f report last", "n2f report base --against base-pc", "n2f report base --json"),
    "show": ("n2f show base 7", "n2f show base dedc-017 --full", "n2f show base 1 --json"),
    "export": ("n2f export base --format csv -o base.csv", "n2f export base base-pc --format parquet -o both.parquet",
               "n2f export base --format inspect -o base.eval && inspect view",
               "n2f export base --format jsonl --annotations > base.jsonl"),
    "resume": ("n2f resume base", "n2f resume base -j 4 --max-cost 2.50"),
    "smoke": ("n2f smoke -m openai:gpt-4o-mini -n 10", "n2f smoke -m local -n 2 -s max_tokens=128 --engine dedc logic"),
    "rescore": ("n2f rescore base",),
    "bench": ("n2f bench --engine dedc logic", "n2f bench --no-concurrency --json"),
    "tui": ("n2f tui last", "n2f tui base --annotator ada --blind"),
    "settings": ("n2f settings dedc", "n2f settings compost --json"),
    "completion": ("n2f completion bash > ~/.local/share/bash-completion/completions/n2f",
                   "n2f completion zsh > ~/.zfunc/_n2f", "n2f completion fish > ~/.config/fish/completions/n2f.fish"),
    "study": ("n2f study create base --size 50 --seed 0 --stratify tag --only wrong", "n2f study show base"),
    "study create": ("n2f study create base --size 50 --seed 0 --stratify graph_type",),
    "study show": ("n2f study show base --json",),
    "annotations": ("n2f annotations export base --annotator ada -o ada.jsonl", "n2f annotations import base bob.jsonl"),
    "annotations export": ("n2f annotations export base --annotator ada -o ada.jsonl",),
    "annotations import": ("n2f annotations import base bob.jsonl",),
    "annotations settle": ("n2f annotations settle base dedc-017 omission", "n2f annotations settle base dedc-017"),
    "agreement": ("n2f agreement base", "n2f agreement base --json", "n2f agreement base --format latex > kappa.tex"),
    "pack": ("n2f pack base -o base.n2f.tar.gz   # everything a second annotator needs",),
    "unpack": ("n2f unpack base.n2f.tar.gz         # into this machine's home, same run id",),
    "cache": ("n2f cache info", "n2f cache clear --model gpt-4o-mini --older-than 7d"),
    "cache info": ("n2f cache info", "n2f cache info --json"),
    "cache clear": ("n2f cache clear", "n2f cache clear --model gpt-4o-mini", "n2f cache clear --older-than 7d"),
}


def epilog(path: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[path])


def add_examples(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Each parser of the tree gets its examples (the help keeps its own line breaks for them)."""
    parser.epilog = epilog(path)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for action in parser._actions:  # argparse keeps its subparsers there and nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                add_examples(child, f"{path} {name}".strip())
