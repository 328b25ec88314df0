"""The ``paper`` block of a report: the paper's figures for the run's setting, the run's own, and the comparison.

The figures and the interval are the engine's (``engines.papers``, the ``PaperRecord`` its parts
offer; an engine without one has no figures and an empty block); this module only selects the figures a run's setting matches, reads the run's own value of
each metric from its report, and lays the rows out for ``--json`` and the renderers.
"""

from __future__ import annotations

from typing import Any, Mapping

from engines.core import RunResults, settings_to_json
from engines.papers import PaperFigure, canonical, compare, figures, grouped, paper_record, prompt_blind, same_model, setting_matches


def matching_figures(engine: str, run: RunResults) -> tuple[dict[str, list[str]], list[PaperFigure]]:
    record = paper_record(engine)
    if record is None:
        return {}, []
    setting = record.run_setting(settings_to_json(run.settings), run.results)
    found = [f for f in record.figures if setting_matches(f, setting)]
    return {k: sorted(v) for k, v in setting.items()}, found


def _figure_json(f: PaperFigure) -> dict[str, Any]:
    return {"model": f.model, "row": f.row, "column": f.column, "metric": f.metric, "value": f.value,
            "relation": f.relation, "percent_in_paper": f.percent, "setting": f.setting_text(),
            "condition": f.condition, "offline": f.offline, "config": dict(f.config)}


def paper_block(engine: str, run: RunResults, metrics: Mapping[str, float]) -> dict[str, Any]:
    """Per (table, block): the paper's rows, the run's own row and, for the run's model, the differences."""
    record = paper_record(engine)
    setting, found = matching_figures(engine, run)
    tables: list[dict[str, Any]] = []
    if record is None:  # the engine offers no paper figures
        return {"engine": engine, "setting": setting, "model": run.model, "figures_on_record": 0,
                "config": {}, "notes": [], "tables": tables}
    config = record.run_config(settings_to_json(run.settings), run.model, run.results)
    blind = prompt_blind(run.model)
    notes = [f"{run.model.partition(':')[0]} does not read the prompt ({blind}): a figure that depends on the "
             f"prompt says nothing about a prompt here{record.prompt_dependent}"] if blind else []
    for (table, block), group in grouped(found).items():
        keys = list(dict.fromkeys(f.metric for f in group))
        run_values = {k: metrics[k] for k in keys if k in metrics}
        sizes = {k: record.sample_size(k, run.results) for k in run_values}
        comparisons = []
        for f in group:
            if f.metric in run_values and same_model(run.model, f.model):
                c = compare(f, float(run_values[f.metric]), sizes[f.metric], config)
                if c is not None:
                    comparisons.append({"model": f.model, "row": f.row, "metric": f.metric, **c.to_json()})
        tables.append({
            "table": table, "block": block, "metrics": keys,
            "rows": [_figure_json(f) for f in group],
            "run": {"model": run.model, "values": run_values, "n": sizes, "config": config},
            "comparisons": comparisons,
            "offline": sorted({f.offline for f in group if f.offline}),
            "notes": notes,
        })
    return {"engine": engine, "setting": setting, "model": run.model, "figures_on_record": len(record.figures),
            "config": config, "notes": notes, "tables": tables}


def _merged_setting(group: list[PaperFigure]) -> str:
    """The block's settings in one line: each key once, with every value the block's figures use."""
    values: dict[str, list[str]] = {}
    for f in group:
        for key, value in f.setting:
            text = canonical(value) if isinstance(value, bool) else str(value)
            values.setdefault(key, [])
            if text not in values[key]:
                values[key].append(text)
    return " ".join(f"{k}={'|'.join(v)}" for k, v in values.items())


def papers_listing(engine: str) -> list[dict[str, Any]]:
    """What is on record for one engine, one entry per (table, block): setting(s), models, metrics."""
    out = []
    for (table, block), group in grouped(figures(engine)).items():
        out.append({"engine": engine, "table": table, "block": block,
                    "settings": _merged_setting(group),
                    "models": list(dict.fromkeys(f.model for f in group)),
                    "metrics": list(dict.fromkeys(f.metric for f in group)),
                    "figures": len(group),
                    "offline": sorted({f.offline for f in group if f.offline})})
    return out
