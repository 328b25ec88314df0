"""rgp verdicts (the paper's C(P), released ``program_eval_5.py``) and run reports (Tables 1, 2).

An item has two outputs: the model's reply and the sandbox's JSON report of running
the extracted program on the 16 inputs (``sessions.tools.dispatch.python_sandbox``). Scoring
reads both and never runs anything:

- a sample passes iff its stripped stdout equals the stripped gold grid (the exit
  status is not looked at, as in ``program_check.py``) and the sandbox did not kill the
  run (timeout, CPU, output or file size limit); E(P) counts the samples that fail;
- L(P+) is the estimator's clipped table size (``estimate.py``);
- L(P) = L(P+) + (N + M) * E(P) with N = k = 4, M = k^2 = 16;
- C(P) = 100 * (Lz - clip(L(P), Ls, Lz)) / (Lz - Ls) with Ls = 40, Lz = 320.

No program, or one that is not Python: status ``unparseable`` and E = 16 (every sample
fails, as running it would); the scores are what the paper's pipeline gives such a
program (L(P+) of an empty program is the clip, 40; C = 0). Status ``correct`` means
E(P) = 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from statistics import mean
from typing import Any, Mapping, Sequence

from engines.core import Chart, Item, ItemResult, Report, RunResults, Status, Table, TagType, Verdict
from engines.reporting import scored, status_counts, tag_table
from engines.rgp.estimate import Estimate, estimate
from engines.rgp.grids import K
from engines.rgp.parse import extract_program, syntax_problem
from engines.rgp.settings import SETTING_LABELS, RgpSettings
from engines.rgp.tags import PROFILES, execution_tags, profile, profile_tag, tag

DEFAULT_SETTINGS = RgpSettings()
LS, LZ = 40, 320  # u(k + k^2) and d(k + k^2)
PER_ERROR = K + K * K  # N + M: the cost of one wrong sample


def program_length(table_length: int, errors: int) -> int:
    return table_length + PER_ERROR * errors


def compositionality(length: int) -> float:
    return 100.0 * (LZ - min(max(length, LS), LZ)) / (LZ - LS)


# ------------------------------------------------------------------ sandbox runs


@dataclass(frozen=True)
class SampleRun:
    """One sample: the gold grid and what the program did on its input."""

    number: int  # 1-based, in the item's order
    input: str
    expected: str
    stdout: str
    stderr: str
    exit_code: int | None
    signal: str
    killed_by: str
    wall_s: float
    truncated: bool

    @property
    def outcome(self) -> str:
        """ok | wrong | crash | timeout."""
        if self.killed_by in ("timeout", "cpu_limit"):
            return "timeout"
        if self.killed_by or self.truncated:
            return "crash"
        if self.stdout.strip() == self.expected.strip():
            return "ok"
        return "crash" if self.exit_code != 0 or self.signal else "wrong"

    @property
    def detail(self) -> str:
        if self.killed_by == "timeout":
            return f"killed after the {self.wall_s:.1f} s wall-clock limit"
        if self.killed_by == "cpu_limit":
            return "killed at the CPU time limit"
        if self.killed_by == "output_limit":
            return "killed: wrote more than the output limit"
        if self.killed_by:
            return f"killed: {self.killed_by.replace('_', ' ')}"
        last = self.stderr.strip().splitlines()[-1] if self.stderr.strip() else ""
        how = f"signal {self.signal}" if self.signal else f"exit status {self.exit_code}"
        return f"{how}" + (f": {last}" if last else "")


@dataclass(frozen=True)
class Execution:
    isolation: str
    timeout_s: float
    runs: tuple[SampleRun, ...]


def read_execution(text: str, samples: Sequence[tuple[str, str]]) -> Execution:
    """The sandbox's report for this item's samples; ValueError when it is not one."""
    try:
        data = json.loads(text)
        runs = data["runs"]
        if len(runs) != len(samples):
            raise ValueError(f"{len(runs)} runs for {len(samples)} samples")
        parsed = tuple(
            SampleRun(number=i + 1, input=text_in, expected=gold, stdout=str(r["stdout"]), stderr=str(r["stderr"]),
                      exit_code=r["exit_code"], signal=str(r.get("signal", "")), killed_by=str(r["killed_by"]),
                      wall_s=float(r["wall_s"]), truncated=bool(r.get("stdout_truncated", False)))
            for i, ((text_in, gold), r) in enumerate(zip(samples, runs)))
        return Execution(str(data.get("isolation", "")), float(data.get("timeout_s", 0)), parsed)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a sandbox report: {exc}") from None


# -------------------------------------------------------------------- verdicts


def _scores(errors: int, est: Estimate) -> dict[str, float]:
    length = program_length(est.table_length, errors)
    return {"E": float(errors), "L_table": float(est.table_length), "L": float(length),
            "C": round(compositionality(length), 4)}


def score_item(item: Item, outputs: Sequence[str], settings: RgpSettings = DEFAULT_SETTINGS,
               with_views: bool = True) -> Verdict:
    from engines.rgp import views

    samples = [(s["input"], s["output"]) for s in item.inputs["samples"]]
    extraction = extract_program(outputs[0] if outputs else "")
    program = extraction.program
    est = estimate(program)
    tags = []
    if extraction.program and extraction.source != "python code block":
        tags.append(tag("format_violation", f"program taken from a {extraction.source}"))

    if not program:
        evidence = "the reply holds no python code block" + ("" if outputs else " (no output)")
        vs = views.no_program_views(item, outputs[0] if outputs else "", est) if with_views else []
        return Verdict("unparseable", _scores(len(samples), est), [tag("no_program", evidence)], vs)
    problem = syntax_problem(program)
    if problem is not None:
        vs = views.unparseable_views(item, program, problem, est) if with_views else []
        return Verdict("unparseable", _scores(len(samples), est), [tag("unparseable", problem.describe()), *tags], vs)
    if len(outputs) < 2:
        vs = views.not_run_views(program, est, "the program was not run: no sandbox report (second output)") \
            if with_views else []
        return Verdict("error", {"L_table": float(est.table_length)}, tags, vs)
    try:
        execution = read_execution(outputs[1], samples)
    except ValueError as exc:
        vs = views.not_run_views(program, est, f"the second output is {exc}") if with_views else []
        return Verdict("error", {"L_table": float(est.table_length)}, tags, vs)

    failed = [(r.number, r.outcome, r.detail) for r in execution.runs if r.outcome != "ok"]
    errors = len(failed)
    tags = execution_tags(failed, len(samples)) + tags
    code = profile(est.table_length, errors, settings.compressed_max, settings.errors_max)
    if code:
        tags.insert(0, profile_tag(code, est.table_length, errors, settings.compressed_max, settings.errors_max))
    status: Status = "correct" if errors == 0 else "wrong"
    scores = _scores(errors, est)
    vs = views.verdict_views(item, status, program, extraction.source, est, execution, scores, code) \
        if with_views else []
    return Verdict(status, scores, tags, vs)


# ---------------------------------------------------------------------- reports


def _round2(x: float) -> float:
    return round(x + 0.0, 2)


def _mean_c(results: Sequence[ItemResult]) -> float | None:
    values = [r.scores["C"] for r in results if "C" in r.scores]
    return _round2(mean(values)) if values else None


def _by_setting(results: Sequence[ItemResult]) -> dict[str, list[ItemResult]]:
    groups: dict[str, list[ItemResult]] = {}
    for r in results:
        groups.setdefault(str(r.item.meta.get("setting", "?")), []).append(r)
    return groups


def _isolation_levels(results: Sequence[ItemResult]) -> dict[str, int]:
    levels: dict[str, int] = {}
    for r in results:
        if len(r.outputs) > 1:
            try:
                level = str(json.loads(r.outputs[1]).get("isolation", "")) or "unknown"
            except (ValueError, AttributeError):
                continue
            levels[level] = levels.get(level, 0) + 1
    return levels


def _dash(x: float | None) -> Any:
    return "-" if x is None else x


def aggregate(run: RunResults, against: Sequence[RunResults], taxonomy: Sequence[TagType]) -> Report:
    settings = run.settings if isinstance(run.settings, RgpSettings) else RgpSettings()
    judged = scored(run.results)
    groups = _by_setting(judged)
    notes: list[str] = []
    counts = status_counts(run.results)
    if counts.get("error"):
        notes.append(f"{counts['error']} items in status error (not run) are excluded")

    metrics: dict[str, float] = {}
    if judged:
        metrics.update(
            mean_C=_round2(mean(r.scores.get("C", 0.0) for r in judged)),
            mean_E=_round2(mean(r.scores.get("E", 0.0) for r in judged)),
            mean_L_table=_round2(mean(r.scores.get("L_table", 0.0) for r in judged)),
            mean_L=_round2(mean(r.scores.get("L", 0.0) for r in judged)),
            in_sample_accuracy=round(mean(1 - r.scores.get("E", 16.0) / 16 for r in judged), 4),
        )
    profile_counts = {code: sum(any(t.code == code for t in r.tags) for r in judged) for code in PROFILES}
    metrics.update({code: float(n) for code, n in profile_counts.items()})
    for setting, group in groups.items():
        value = _mean_c(group)
        if value is not None:
            metrics[f"mean_C_{setting}"] = value

    tables = [_table1(run, against), _table2(run, against), _per_setting(groups),
              _profiles(profile_counts, len(judged), settings), _scatter(judged, settings),
              tag_table("Tags", "Items per tag", judged, taxonomy)]
    levels = _isolation_levels(judged)
    if levels:
        tables.append(Table("Sandbox", "Isolation in force when the programs ran", ["isolation", "items"],
                            [[level, n] for level, n in sorted(levels.items())]))
        for level in levels:
            notes.append(f"sandbox: {level}" + (" - only resource limits protected this machine" if
                                                 level.startswith("rlimits only") else ""))
    charts = [
        Chart("Figure 3", "Profiles (regions of L(P+) against E(P))",
              {f"{code} ({_REGION[code]})": float(profile_counts[code]) for code in PROFILES}, " items"),
        Chart("Table 1", "Mean C(P) per setting",
              {SETTING_LABELS.get(s, s): v for s in SETTING_LABELS if (v := _mean_c(groups.get(s, []))) is not None}),
    ]
    return Report(metrics=metrics, tables=tables, charts=charts, notes=notes)


_REGION = {"T1": "compressed, correct", "T2": "enumerated, correct", "T3": "compressed, wrong"}
TABLE1 = ("h", "b", "v", "r")


def _model_rows(run: RunResults, against: Sequence[RunResults]) -> list[tuple[str, dict[str, list[ItemResult]]]]:
    rows: dict[str, dict[str, list[ItemResult]]] = {}
    for r in [run, *against]:
        groups = rows.setdefault(r.model, {})
        for setting, group in _by_setting(scored(r.results)).items():
            groups.setdefault(setting, []).extend(group)
    return list(rows.items())


def _table1(run: RunResults, against: Sequence[RunResults]) -> Table:
    rows = [[model, *(_dash(_mean_c(groups.get(s, []))) for s in TABLE1)] for model, groups in _model_rows(run, against)]
    return Table("Table 1", "Mean C(P) per setting", ["model", *(SETTING_LABELS[s] for s in TABLE1)], rows,
                 note="C(P) = 100 (Lz - clip(L(P), Ls, Lz)) / (Lz - Ls), Ls = 40, Lz = 320; "
                      "L(P) = L(P+) + 20 E(P)")


def _table2(run: RunResults, against: Sequence[RunResults]) -> Table:
    rows = []
    for model, groups in _model_rows(run, against):
        h, r, ri, hr = (_mean_c(groups.get(s, [])) for s in ("h", "r", "ri", "hr"))
        ri_delta = _round2(ri - h) if ri is not None and h is not None else None
        hr_delta = _round2(hr - (h + r) / 2) if hr is not None and h is not None and r is not None else None
        rows.append([model, _dash(ri), _dash(ri_delta), _dash(hr), _dash(hr_delta)])
    return Table("Table 2", "Robustness: index shuffle and setting combination (mean C(P))",
                 ["model", "RI(H)", "vs Horizontal", "SC(H+R)", "vs mean of H and R"], rows)


def _per_setting(groups: Mapping[str, list[ItemResult]]) -> Table:
    rows = []
    order = [s for s in SETTING_LABELS if s in groups] + sorted(set(groups) - set(SETTING_LABELS))
    for setting in order:
        group = groups[setting]
        codes = [{t.code for t in r.tags} for r in group]
        rows.append([
            SETTING_LABELS.get(setting, setting), len(group), _dash(_mean_c(group)),
            _round2(100 * mean(1 - r.scores.get("E", 16.0) / 16 for r in group)),
            _round2(mean(r.scores.get("E", 16.0) for r in group)),
            _round2(mean(r.scores.get("L_table", 0.0) for r in group)),
            *(sum(code in c for c in codes) for code in (*PROFILES, "no_program", "runtime_error", "timeout")),
        ])
    return Table("By setting", "Per setting: means of C(P), in-sample accuracy, E(P), L(P+); profiles; failures",
                 ["setting", "n", "C", "acc %", "E", "L(P+)", *PROFILES, "no prog", "crash", "timeout"], rows)


def _profiles(counts: Mapping[str, int], n: int, settings: RgpSettings) -> Table:
    rows = [[code, _REGION[code], counts[code], _round2(100 * counts[code] / n) if n else 0.0] for code in PROFILES]
    return Table("Profiles", "Compositionality profiles", ["profile", "region", "items", "%"], rows,
                 note=f"compressed: L(P+) <= {settings.compressed_max:g}; correct: E(P) <= {settings.errors_max} "
                      "(settings compressed_max, errors_max)")


def _scatter(results: Sequence[ItemResult], settings: RgpSettings) -> Table:
    """Programs that ran, as points (items without a valid program have no P to place)."""
    points: dict[tuple[int, int], int] = {}
    for r in results:
        if r.status in ("correct", "wrong"):
            key = (int(r.scores["L_table"]), int(r.scores["E"]))
            points[key] = points.get(key, 0) + 1
    rows = [[lt, e, n, profile(lt, e, settings.compressed_max, settings.errors_max) or "-"]
            for (lt, e), n in sorted(points.items())]
    return Table("Figure 3", "L(P+) against E(P): one row per point, with its profile region",
                 ["L(P+)", "E(P)", "items", "region"], rows,
                 note=f"regions: T1 L(P+) <= {settings.compressed_max:g} and E(P) <= {settings.errors_max}; "
                      f"T2 L(P+) > {settings.compressed_max:g} and E(P) <= {settings.errors_max}; "
                      f"T3 L(P+) <= {settings.compressed_max:g} and E(P) > {settings.errors_max}")
