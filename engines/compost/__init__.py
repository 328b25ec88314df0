"""CompoST (Schmidt et al., ISWC 2025): compositional systematicity in question -> SPARQL.

Step 1 asks the model for the query; step 2 is a ``sparql`` tool step (executed by
the sessions layer on the bundled graph or an endpoint) whose JSON the scorer turns
into result-set precision, recall and F1. Official items without an endpoint stop
after step 1 and are scored structurally.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.compost import prompts
from engines.compost.settings import CompostSettings
from engines.core import Item, Message, Report, RunResults, Step
from engines.package import PackageEngine

SPARQL_TOOL = "sparql"


class CompostEngine(PackageEngine):
    name = "compost"
    title = "CompoST: compositional interpretation of questions into SPARQL"
    settings_type = CompostSettings
    main_score = "f1"
    tools = (SPARQL_TOOL,)
    report_reads_outputs = True  # official items without a query result are counted apart

    def items(self, settings: CompostSettings, seed: int) -> list[Item]:
        if settings.dataset:
            from engines.compost.official import load_official

            return load_official(settings)
        from engines.compost.generate import build_items

        return build_items(settings, seed)

    def next_step(self, item: Item, settings: Any, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        settings = settings or CompostSettings()
        if not outputs:
            prompt = prompts.build_prompt(item, (templates or {}).get(prompts.QUERY))
            return Step(name=prompts.QUERY, messages=(Message("system", prompts.SYSTEM), Message("user", prompt)),
                        params=self.model_params(settings),
                        template=prompts.QUERY)
        if len(outputs) > 1:
            return None
        if item.meta.get("source") == "official" and not settings.endpoint:
            return None  # no gold answers without DBpedia: scored structurally
        from engines.compost.score import read_output

        parsed, _ = read_output(outputs[0], settings.extract)
        if parsed is None:
            return None
        return Step(name="execute", kind="tool", tool=SPARQL_TOOL,
                    payload={"query": parsed.executable, "gold": item.gold["query"], "endpoint": settings.endpoint,
                             "timeout": settings.timeout, "row_cap": settings.row_cap})

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        from engines.compost.report import aggregate

        return aggregate(run, against)


ENGINE = CompostEngine()
