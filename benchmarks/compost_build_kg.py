"""Build the compact knowledge graph shipped in engines/compost/data/kg.nt.gz.

Reads ../shared/data/dbpedia_small/dbpedia50_plus_db100k_vt_dbo.nt.gz (real DBpedia
facts) and keeps what the generator can verbalise: triples of the lexicon's
properties between resources, rdf:type triples to the lexicon's classes and the
rdfs:label of every kept resource. Run from the repository root:
    python benchmarks/compost_build_kg.py
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines.compost.lexicon import RDF_TYPE, RDFS_LABEL, default_lexicon  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "dbpedia_small" / "dbpedia50_plus_db100k_vt_dbo.nt.gz"
TARGET = ROOT / "engines" / "compost" / "data" / "kg.nt.gz"


def split(line: str) -> tuple[str, str, str] | None:
    parts = line.rstrip().rstrip(".").strip().split(" ", 2)
    return (parts[0], parts[1], parts[2].strip()) if len(parts) == 3 else None


def main() -> None:
    lexicon = default_lexicon()
    props = {f"<{p}>" for p in lexicon.props}
    classes = {f"<{c}>" for c in lexicon.types}
    facts, types, labels = [], [], {}
    with gzip.open(SOURCE, "rt", encoding="utf-8") as fh:
        for line in fh:
            t = split(line)
            if t is None:
                continue
            s, p, o = t
            if p in props and o.startswith("<"):
                facts.append(t)
            elif p == f"<{RDF_TYPE}>" and o in classes:
                types.append(t)
            elif p == f"<{RDFS_LABEL}>":
                labels[s] = o
    facts = [t for t in facts if t[0] in labels and t[2] in labels]
    nodes = {t[0] for t in facts} | {t[2] for t in facts}
    types = [t for t in types if t[0] in nodes]
    out = sorted(set(facts)) + sorted(set(types)) + sorted((s, f"<{RDFS_LABEL}>", labels[s]) for s in nodes)
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(TARGET, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.writelines(f"{s} {p} {o} .\n" for s, p, o in out)
    print(f"{TARGET}: {len(facts)} facts, {len(types)} types, {len(nodes)} labels, {TARGET.stat().st_size} bytes")


if __name__ == "__main__":
    main()
