"""No reply can crash a run: replays of deep, long and 100 MB replies through the real ``n2f`` command.

Every run finishes with a status for every item, ``n2f show`` opens each item, ``resume`` has
nothing left to do; a 100 MB reply is judged (``unparseable``, tag ``oversized_reply``) in a
bounded CPU time, measured as the child processes' CPU (``resource.getrusage``), not the wall clock.
"""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import pytest

from cli_support import n2f, n2f_process
from engines import get_engine
from engines.core import STATUSES
from hostile_replies import HUGE, hostile
from sessions import api

ENGINES = ("compost", "dedc", "logic", "robogrid", "rgp")
RUN_CPU_SECONDS = 60  # the whole run command with its 100 MB reply: start-up, replay file, storing, scoring
JUDGE_CPU_SECONDS = 2.0  # judging the 100 MB reply itself




def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_replay(engine: str, path: Path, huge: int) -> int:
    _, _, items = api.build_items(engine, [], 0)
    pairs = hostile(lambda i: items[i], engine, huge)
    with path.open("w", encoding="utf-8") as handle:
        for item, outputs in pairs:
            handle.write(json.dumps({"id": item.id, "outputs": outputs}, ensure_ascii=False) + "\n")
    return len(pairs)



@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_deep_long_and_100_mb_replies_finish_the_run_and_every_item_opens(engine, tmp_path):
    replay = tmp_path / "hostile.jsonl"
    count = write_replay(engine, replay, HUGE)
    before = children_cpu()
    run = n2f_process("run", engine, "-m", f"replay:{replay}", "-n", str(count), "--name", "hostile", "-q", "--json")
    cpu = children_cpu() - before
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    print(f"{engine}: n2f run with a {HUGE:,}-character reply among {count} hostile replies: {cpu:.1f} s CPU")
    assert cpu < RUN_CPU_SECONDS
    report = json.loads(n2f("report", "hostile", "--json").stdout)
    assert report["counts"]["pending"] == 0 and report["counts"]["error"] == 0, report["counts"]
    assert sum(report["counts"].values()) == count
    for position in range(1, count + 1):
        shown = n2f("show", "hostile", str(position), "--json")
        assert shown.returncode == 0, shown.stderr[-2000:]
        record = json.loads(shown.stdout)["record"]
        assert record["status"] in STATUSES
    huge_item = json.loads(n2f("show", "hostile", str(count), "--json").stdout)
    assert huge_item["record"]["status"] == "unparseable"
    assert "oversized_reply" in {t["code"] for t in huge_item["record"]["tags"]}
    resumed = n2f("resume", "hostile", "-q", "--json")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["counts"] == report["counts"], "resume had nothing left to do"
    assert n2f("rescore", "hostile").returncode == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_100_mb_reply_is_judged_in_bounded_cpu(engine):
    spec = get_engine(engine)
    _, settings, items = api.build_items(engine, [], 0)
    outputs = ["x" * HUGE] if engine != "logic" else ["a description", "x" * HUGE]
    started = time.process_time()
    verdict = spec.score(items[0], outputs, settings)
    spent = time.process_time() - started
    assert verdict.status == "unparseable" and "oversized_reply" in {t.code for t in verdict.tags}
    assert "100,000,000 characters" in verdict.tags[0].evidence
    assert spent < JUDGE_CPU_SECONDS, spent
