"""What the CLI and the inspector ask of the sessions layer, in one place.

A facade and nothing else: each name lives in the feature package that owns it (``run``,
``store``, ``reports``), and front ends call it through this module (``api.build_report``),
so a test can replace one entry for both of them. Modules inside ``sessions/`` import from
the owning module, never from here.

Names are imported when first used (PEP 562): ``n2f show`` reads one item and must not pay
for what prepares a run (backends, asyncio, the cache); ``tests/test_layout.py`` checks
that every name below resolves.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sessions.reports.detail import ItemDetail, find_item, item_detail, item_steps, score_detail
    from sessions.reports.report import build_report, report_metrics
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

OWNERS = {
    "sessions.reports.detail": ("ItemDetail", "find_item", "item_detail", "item_steps", "score_detail"),
    "sessions.reports.report": ("build_report", "report_metrics"),
    "sessions.run.prepare": ("DEFAULT_SEED", "PreparedRun", "build_items", "chosen_items", "local_settings",
                             "make_budget", "package_versions", "plan_run", "prepare_resume", "prepare_run",
                             "price_of", "reproduction_meta", "rescore", "run_tool_steps", "seeded_sample"),
    "sessions.store.results": ("load_results", "run_settings"),
}
_OWNER = {name: module for module, names in OWNERS.items() for name in names}
__all__ = [  # literal, so that type checkers see the names re-exported (the layout test checks it against OWNERS)
    "DEFAULT_SEED", "ItemDetail", "PreparedRun", "build_items", "build_report", "chosen_items", "find_item",
    "item_detail", "item_steps", "load_results", "local_settings", "make_budget", "package_versions", "plan_run",
    "prepare_resume", "prepare_run", "price_of", "report_metrics", "reproduction_meta", "rescore", "run_settings",
    "run_tool_steps", "score_detail", "seeded_sample",
]


def __getattr__(name: str) -> Any:
    module = _OWNER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups are plain attribute reads (and a test's setattr wins)
    return value
