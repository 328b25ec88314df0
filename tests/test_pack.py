"""A run handed over between machines: pack, unpack into other homes, label there, export, import, agree, settle;
and the refusals: a different run under the same id, labels made on other outputs."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from sessions.errors import InputError
from sessions.store.pack import MANIFEST, read_pack
from sessions.store.runs import RunStore
from cli_support import n2f as cli_n2f

RUN = ["run", "dedc", "-m", "sim:error_rate=0.7", "-n", "40", "--name", "shared", "-q", "--json"]


def n2f(home: Path, *args: str, status: int = 0) -> subprocess.CompletedProcess:
    """``n2f ARGS`` on the data home ``home`` (one machine)."""
    result = cli_n2f(*args, env={"N2F_HOME": str(home)})
    assert result.returncode == status, f"n2f {' '.join(args)} exited {result.returncode}\n{result.stderr}"
    if status:
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    return result


def open_in(monkeypatch, home: Path, ref: str = "shared") -> RunStore:
    monkeypatch.setenv("N2F_HOME", str(home))
    return RunStore.open(ref)


# On code ``omission`` over the 20 study items, ada says yes on items 0-9, bob on items 0-5 and 10-13:
#                bob yes  bob no
#     ada yes       6        4
#     ada no        4        6
# Krippendorff's alpha (2 coders, 20 units, 40 values, 20 of them "yes"): the 8 discordant units each
# disagree by 2*1*1/(2-1) = 2, so alpha = 1 - (40-1) * 16 / (2 * 20 * 20) = 1 - 624/800 = 0.22.
# Cohen's kappa: p_o = 12/20, p_e = 1/2, kappa = 0.2.
def says_omission(name: str, position: int) -> bool:
    return position < 10 if name == "ada" else position < 6 or 10 <= position < 14


def label(store: RunStore, name: str, items: list[str]) -> None:
    log = store.annotations(name)
    for position, item_id in enumerate(items):
        if says_omission(name, position):
            log.add(item_id, "tag_add", code="omission", label="Omission", blind=True)
        log.add(item_id, "reviewed", blind=True)


@pytest.mark.slow
def test_pack_unpack_label_in_two_homes_merge_into_a_third(tmp_path, monkeypatch):
    lead, ada, bob = (tmp_path / name for name in ("lead", "ada", "bob"))
    run_id = json.loads(n2f(lead, *RUN).stdout)["run"]
    n2f(lead, "study", "create", "shared", "--size", "20", "--seed", "0")
    pack = tmp_path / "shared.n2f"
    packed = n2f(lead, "pack", "shared", "-o", str(pack)).stdout
    fingerprint = packed.split("fingerprint ")[1].split(")")[0]
    assert "packed run shared (40 items" in packed and pack.stat().st_size > 0
    for home in (ada, bob):
        assert f"installed run shared ({run_id}, fingerprint {fingerprint})" in n2f(home, "unpack", str(pack)).stdout
        assert [r["id"] for r in json.loads(n2f(home, "runs", "--json").stdout)] == [run_id]
    origin = open_in(monkeypatch, lead)
    copy = open_in(monkeypatch, ada)
    assert copy.item_ids() == origin.item_ids() and copy.results() == origin.results()
    items = json.loads(n2f(ada, "study", "show", "shared", "--json").stdout)["items"]
    assert len(items) == 20

    exports = {}
    for name, home in (("ada", ada), ("bob", bob)):
        label(open_in(monkeypatch, home), name, items)
        exports[name] = tmp_path / f"{name}.jsonl"
        n2f(home, "annotations", "export", "shared", "--annotator", name, "-o", str(exports[name]))
        events = [json.loads(line) for line in exports[name].read_text().splitlines()]
        assert {e["fingerprint"] for e in events} == {fingerprint} and all(e["output"] for e in events)
    for name in ("ada", "bob"):
        assert "imported" in n2f(lead, "annotations", "import", "shared", str(exports[name])).stdout

    report = json.loads(n2f(lead, "agreement", "shared", "--json").stdout)
    assert report["annotators"] == ["ada", "bob"] and report["n"] == 20
    omission = next(a for a in report["alpha"] if a["code"] == "omission")
    assert omission["alpha"] == pytest.approx(0.22) and omission["items"] == 20 and omission["values"] == 40
    low, high = omission["ci"]
    assert low < 0.22 < high
    assert next(t for t in report["tags"] if t["code"] == "omission")["kappa"]["value"] == pytest.approx(0.2)
    disputed = items[6:14]
    assert report["queue"] == disputed
    for item_id in disputed:
        n2f(lead, "annotations", "settle", "shared", item_id, "omission", "--annotator", "lead")
    assert json.loads(n2f(lead, "agreement", "shared", "--json").stdout)["queue"] == []
    final = json.loads(n2f(lead, "report", "shared", "--json").stdout)["review"]
    assert final["settled"] == 8 and final["disputed"] == 0 and final["annotators"] == ["ada", "bob"]

    again = n2f(ada, "unpack", str(pack)).stdout  # the same run is here: nothing replaced, events merged
    assert "here already with the same items and outputs; took in 0 new annotation event(s)" in again


def test_unpack_refuses_a_different_run_under_the_same_id_and_a_damaged_pack(tmp_path, monkeypatch):
    lead, other = tmp_path / "lead", tmp_path / "other"
    n2f(lead, *RUN)
    pack = tmp_path / "shared.n2f"
    n2f(lead, "pack", "shared", "-o", str(pack))
    n2f(other, "unpack", str(pack))
    store = open_in(monkeypatch, other)
    store.acquire()  # the run there changes: item 1 gets another output
    record = dict(store.record(0), outputs=["x = 1"])
    store.add_result(0, record)
    store.close()
    before = (store.folder / "results.jsonl").read_bytes()
    refused = n2f(other, "unpack", str(pack), status=2)
    assert f"this home has a different run {store.id}" in refused.stderr and "nothing was written" in refused.stderr
    assert (store.folder / "results.jsonl").read_bytes() == before

    damaged = tmp_path / "damaged.n2f"
    damaged.write_bytes(pack.read_bytes()[:-200])
    fresh = tmp_path / "fresh"
    n2f(fresh, "unpack", str(damaged), status=2)
    assert not (fresh / "runs").exists() or not any((fresh / "runs").iterdir())
    n2f(fresh, "unpack", str(tmp_path / "missing.n2f"), status=2)


def test_import_refuses_labels_made_on_other_outputs_naming_them_and_force_marks_them(tmp_path, monkeypatch):
    lead, other = tmp_path / "lead", tmp_path / "other"
    n2f(lead, *RUN)
    n2f(other, *[a if a != "sim:error_rate=0.7" else "sim:error_rate=0.2" for a in RUN])  # same ids, other replies
    mine, theirs = open_in(monkeypatch, lead), open_in(monkeypatch, other)
    assert mine.item_ids() == theirs.item_ids()
    ids = mine.item_ids()
    differ = [ids[i] for i in range(len(ids)) if mine.record(i)["outputs"] != theirs.record(i)["outputs"]]
    assert 0 < len(differ) < len(ids)
    label(theirs, "bob", ids)
    export = tmp_path / "bob.jsonl"
    n2f(other, "annotations", "export", "shared", "-o", str(export))
    foreign = sum(1 for line in export.read_text().splitlines() if json.loads(line)["item"] in differ)

    refused = n2f(lead, "annotations", "import", "shared", str(export), status=2).stderr
    assert f"{foreign} event(s) on {len(differ)} item(s) ({', '.join(differ[:5])}" in refused
    assert "other outputs" in refused and "--force" in refused
    assert open_in(monkeypatch, lead).annotations().events() == []  # nothing imported

    forced = n2f(lead, "annotations", "import", "shared", str(export), "--force").stdout
    assert f"{foreign} made on other outputs, marked forced" in forced
    events = open_in(monkeypatch, lead).annotations().events()
    assert {e["item"] for e in events if e.get("forced")} == set(differ)
    assert not any(e.get("forced") for e in events if e["item"] not in differ)
    assert json.loads(n2f(lead, "agreement", "shared", "--json").stdout)["forced"] == foreign


def test_read_pack_refuses_a_manifest_that_is_not_a_plain_file(tmp_path):
    pack = tmp_path / "folder.n2f"
    with tarfile.open(pack, mode="w:gz") as tar:
        member = tarfile.TarInfo(MANIFEST)
        member.type = tarfile.DIRTYPE
        tar.addfile(member)
    with pytest.raises(InputError, match="not a plain file"):
        read_pack(pack)
