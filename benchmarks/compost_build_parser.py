"""Write the bundled LALR tables of the SPARQL grammar (engines/compost/sparql_lalr.bin).

Usage: python benchmarks/compost_build_parser.py

Run it after changing engines/sparql/sparql.lark: the engine uses the bundled tables
only while their recorded grammar digest matches the grammar, and otherwise builds the
parser from the grammar at its first query (about half a second per process). Prints the
time a process takes to get a ready parser both ways, median of five fresh processes.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from engines.sparql.grammar import TABLES_PATH, build_parser, grammar_text, serialise

READY = """
import time
t = time.perf_counter()
from engines.compost import grammar
{how}
grammar.parse_tree("SELECT ?x WHERE {{ ?x a <http://e/C> }}")
print(time.perf_counter() - t)
"""


def timed(how: str) -> float:
    runs = [float(subprocess.run([sys.executable, "-c", READY.format(how=how)], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return statistics.median(runs)


def main() -> None:
    text = grammar_text()
    TABLES_PATH.write_bytes(serialise(build_parser(text), text))
    print(f"wrote {TABLES_PATH.name} ({TABLES_PATH.stat().st_size} bytes)")
    print(f"ready parser from the bundled tables: {1000 * timed(''):.0f} ms")
    built = "grammar.parser = lambda: grammar.build_parser(grammar.grammar_text())\n"
    built += "grammar_parse = grammar.parse_tree"
    print(f"ready parser built from the grammar: {1000 * timed(built):.0f} ms")


if __name__ == "__main__":
    main()
