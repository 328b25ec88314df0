"""CompoST (Schmidt et al., ISWC 2025): compositional systematicity in question -> SPARQL.

Step 1 asks the model for the query; step 2 is a ``sparql`` tool step (executed by
the sessions layer on the bundled graph or an endpoint) whose JSON the scorer turns
into result-set precision, recall and F1. Official items without an endpoint stop
after step 1 and are scored structurally.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from engines.compost import prompts
from engines.compost.settings import CompostSettings
from engines.contract import Engine, EngineParts
from engines.core import Item, Report, RunResults, Status, Step

SPARQL_TOOL = "sparql"


class CompostEngine(Engine[CompostSettings]):
    name = "compost"
    title = "CompoST: compositional interpretation of questions into SPARQL"
    settings_type = CompostSettings
    main_score = "f1"
    rank = 4
    tools = (SPARQL_TOOL,)
    report_reads_outputs = True  # official items without a query result are counted apart

    def load_parts(self) -> EngineParts[CompostSettings]:
        from engines.compost import generate, paper, report, score, simulate, tags, views

        return EngineParts(build_items=generate.build_items, templates=prompts.templates, score_item=score.score_item,
                           taxonomy=tags.TAXONOMY, metrics=views.METRICS, simulate=simulate.simulate,
                           oracle=simulate.oracle,
                           aggregate=lambda run, against, _taxonomy: report.aggregate(run, against),
                           paper=paper.PAPER)

    def items(self, settings: CompostSettings, seed: int) -> Sequence[Item]:
        """The official files when ``dataset`` names one, else patterns generated over the bundled graph."""
        if settings.dataset:
            from engines.compost.official import load_official

            return load_official(settings)
        return self.parts.build_items(settings, seed)

    def next_step(self, item: Item, settings: CompostSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if not outputs:
            prompt = prompts.build_prompt(item, (templates or {}).get(prompts.QUERY))
            return self.model_step(prompts.QUERY, prompt, settings, system=prompts.SYSTEM)
        if len(outputs) > 1:
            return None
        if item.meta.get("source") == "official" and not settings.endpoint:
            return None  # no gold answers without DBpedia: scored structurally
        from engines.compost.kg import KG_PATH
        from engines.compost.score import read_output

        parsed, _ = read_output(outputs[0], settings.extract)
        if parsed is None:
            return None
        return Step(name="execute", kind="tool", tool=SPARQL_TOOL,
                    payload={"query": parsed.executable, "gold": item.gold["query"], "endpoint": settings.endpoint,
                             "graph": str(KG_PATH),
                             "timeout": settings.timeout, "row_cap": settings.row_cap})

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        """Its notes say how replies were read, per split and with the authors' scorer beside the prose's,
        so ``with_extraction`` is not added."""
        return self.parts.aggregate(run, against, self.taxonomy())

    def list_score(self, status: Status, scores: Mapping[str, float]) -> float | None:
        """``f1`` of the result sets (structural 1 or 0 without an endpoint); correct means F1 = 1."""
        return scores.get("f1")


ENGINE = CompostEngine()
