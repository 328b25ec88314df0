"""What the CLI and the inspector ask of the sessions layer, in one place.

A facade and nothing else: each name lives in the feature package that owns it (``run``,
``store``, ``reports``), and front ends call it through this module (``api.build_report``),
so a test can replace one entry for both of them. Modules inside ``sessions/`` import from
the owning module, never from here.
"""

from sessions.reports.detail import ItemDetail, find_item, item_detail, item_steps, score_detail
from sessions.reports.report import build_report
from sessions.run.prepare import (
    DEFAULT_SEED,
    PreparedRun,
    build_items,
    chosen_items,
    local_settings,
    make_budget,
    package_versions,
    plan_run,
    prepare_resume,
    prepare_run,
    price_of,
    reproduction_meta,
    rescore,
    run_tool_steps,
    seeded_sample,
)
from sessions.store.results import load_results, run_settings

__all__ = [
    "DEFAULT_SEED", "ItemDetail", "PreparedRun", "build_items", "build_report", "chosen_items", "find_item",
    "item_detail", "item_steps", "load_results", "local_settings", "make_budget", "package_versions", "plan_run",
    "prepare_resume", "prepare_run", "price_of", "reproduction_meta", "rescore", "run_settings", "run_tool_steps",
    "score_detail", "seeded_sample",
]
