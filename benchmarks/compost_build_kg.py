"""Build the compact knowledge graph shipped in engines/compost/data/kg.nt.gz.

Reads ../shared/data/dbpedia_small/dbpedia50_plus_db100k_vt_dbo.nt.gz (real DBpedia
facts) and keeps what the generator can verbalise with the default lexicon or the
released CompoST Lemon lexicon (../shared/data/compost/lexicon, read by the engine's
own Lemon reader):
- triples of the default lexicon's properties between labelled resources (pattern
  edges; dbo:country and dbo:nationality also feed the "that" clauses, "that is German");
- dbo:industry triples of those resources ("that works in the software industry");
- triples of the Lemon lexicon's further properties between those resources only, so
  imported entries find edges without the graph (and its load time) growing by a
  fifth;
- rdf:type triples of the kept resources to the lexicons' classes;
- the rdfs:label of every kept resource.
Run from the repository root:
    python benchmarks/compost_build_kg.py
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines.compost.lemon import read_lemon  # noqa: E402
from engines.compost.lexicon import INDUSTRY, RDF_TYPE, RDFS_LABEL, default_lexicon  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "dbpedia_small" / "dbpedia50_plus_db100k_vt_dbo.nt.gz"
LEMON = ROOT.parent / "shared" / "data" / "compost" / "lexicon"
TARGET = ROOT / "engines" / "compost" / "data" / "kg.nt.gz"


def split(line: str) -> tuple[str, str, str] | None:
    parts = line.rstrip().rstrip(".").strip().split(" ", 2)
    return (parts[0], parts[1], parts[2].strip()) if len(parts) == 3 else None


def main() -> None:
    lexicon, lemon = default_lexicon(), read_lemon(LEMON)
    props = {f"<{p}>" for p in lexicon.props}
    further = {f"<{p}>" for p in {r.prop for r in lemon.readings} | {INDUSTRY}} - props
    classes = {f"<{c}>" for c in set(lexicon.types) | set(lemon.class_nouns)}
    facts, extra, types, labels = [], [], [], {}
    with gzip.open(SOURCE, "rt", encoding="utf-8") as fh:
        for line in fh:
            t = split(line)
            if t is None:
                continue
            s, p, o = t
            if p in props and o.startswith("<"):
                facts.append(t)
            elif p in further and o.startswith("<"):
                extra.append(t)
            elif p == f"<{RDF_TYPE}>" and o in classes:
                types.append(t)
            elif p == f"<{RDFS_LABEL}>":
                labels[s] = o
    facts = [t for t in facts if t[0] in labels and t[2] in labels]
    nodes = {t[0] for t in facts} | {t[2] for t in facts}
    extra = [t for t in extra if t[0] in nodes and (t[2] in nodes or t[1] == f"<{INDUSTRY}>" and t[2] in labels)]
    facts += extra
    nodes |= {t[2] for t in extra}
    types = [t for t in types if t[0] in nodes]
    out = sorted(set(facts)) + sorted(set(types)) + sorted((s, f"<{RDFS_LABEL}>", labels[s]) for s in nodes)
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(TARGET, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.writelines(f"{s} {p} {o} .\n" for s, p, o in out)
    print(f"{TARGET.name}: {len(facts)} facts ({len(extra)} of further properties), {len(types)} types, "
          f"{len(nodes)} labels, {TARGET.stat().st_size} bytes")


if __name__ == "__main__":
    main()
