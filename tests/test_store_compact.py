"""Items stored once (format 2, ``sessions.store.shared``): what is read back is what was generated,
each shared part is on disk once, older runs open, and writing a run does not hold its items."""

from __future__ import annotations

import gc
import io
import itertools
import json
import random
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from engines import engine_names, get_engine
from engines.core import Item, OnDemand, parse_settings
from engines.dedc.settings import DedcSettings
from old_runs import make_format_1
from sessions.errors import InputError
from sessions.run.prepare import chosen_items
from sessions.store.item_ids import IdsWriter, ItemIds
from sessions.store.items import ITEM_IDS, RunItems, write_items
from sessions.store.runs import RunStore
from sessions.store.shared import MIN_SHARED, SHARED, dumps
from sessions.store.statuses import ERROR, RESULT, stored_statuses


def create(items, engine="fake") -> RunStore:
    return RunStore.create(engine=engine, settings={}, seed=0, model="sim", backend={}, items=items, templates={},
                           concurrency=1)


@pytest.mark.parametrize("name", engine_names())
def test_every_engine_item_reads_back_equal_to_the_generated_one(name):
    engine = get_engine(name)
    items = list(itertools.islice(engine.items(parse_settings(engine.settings_type, []), 0), 40))
    store = create(items, engine=name)
    reader = RunStore.open(store.id)
    assert [reader.item(i) for i in range(len(items))] == items
    assert RunStore.open(store.id).items() == items
    assert reader.item_ids() == [item.id for item in items]
    with pytest.raises(IndexError):
        reader.item(len(items))


@pytest.mark.parametrize("index, brief", [(True, True), (False, False)])
def test_a_run_stored_whole_item_a_line_by_an_earlier_version_still_opens(index, brief):
    items = [Item(id=f"it-{i}", engine="fake", inputs={"q": f"question {i} " * 9, "demo": "the same long demonstration " * 4},
                  gold={"a": i}, meta={"k": i % 3}) for i in range(12)]
    store = create(items)
    make_format_1(store.folder, index=index, brief=brief)
    assert not (store.folder / SHARED).exists() and json.loads((store.folder / "items.jsonl").read_text().splitlines()[3]) \
        == items[3].to_json(), "the old layout: each whole item on its line"
    old = RunStore(store.folder)
    assert [old.item(i) for i in range(12)] == items and RunStore(store.folder).items() == items
    assert old.briefs()[5] == {"id": "it-5", "meta": {"k": 2}} and old.find_item("it-7") == 7
    old.acquire()  # its owner writes the index and brief file an earlier version left out
    old.close()
    assert (store.folder / "items.idx").exists() and (store.folder / "items.brief.jsonl").exists()
    assert [RunStore(store.folder).item(i) for i in range(12)] == items


def test_a_run_of_a_later_items_format_is_refused_not_misread():
    store = create([Item(id="a", engine="fake", inputs={}, gold={})])
    store.update_meta(items_format=3)
    with pytest.raises(InputError, match="later n2f"):
        RunStore.open(store.id).item(0)


def test_a_truncated_shared_file_is_an_input_error():
    store = create([Item(id="a", engine="fake", inputs={"q": "x" * 200}, gold={})])
    (store.folder / SHARED).write_bytes(b"")
    with pytest.raises(InputError, match="shared.jsonl"):
        RunStore.open(store.id).item(0)
    with pytest.raises(InputError, match="shared.jsonl"):
        RunStore.open(store.id).items()


def long_strings(value):
    if isinstance(value, str):
        if len(dumps(value)) >= MIN_SHARED:
            yield value
    elif isinstance(value, dict):
        for member in value.values():
            yield from long_strings(member)
    elif isinstance(value, list):
        for member in value:
            yield from long_strings(member)


def test_3230_dedc_items_take_a_quarter_of_their_whole_json_and_each_question_and_answer_is_stored_once():
    """Bounds from the items themselves: items.jsonl under a quarter of the items written whole (format 1,
    5.8 MB), and shared.jsonl exactly the distinct long strings (dedc's questions and answers) once each."""
    items = list(get_engine("dedc").items(DedcSettings(repeat=10), 0))
    assert len(items) == 3230
    whole = sum(len(dumps(item.to_json())) + 1 for item in items)
    distinct = {s for item in items for s in long_strings([item.inputs, item.gold])}
    store = create(items, engine="dedc")
    assert (store.folder / "items.jsonl").stat().st_size < whole / 4
    assert (store.folder / SHARED).stat().st_size == sum(len(dumps(s)) + 1 for s in distinct)
    assert RunStore.open(store.id).item(3229) == items[3229]


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.sampled_from(
    ["", "\x00", "short", "a long value that several items repeat, long enough to be stored once " * 2])
json_values = st.recursive(json_scalars | st.text(max_size=90), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["\x00", "k", "question", "x" * 70]) | st.text(max_size=3), inner, max_size=4), max_leaves=20)


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.dictionaries(st.text(max_size=4) | st.just("\x00"), json_values, max_size=4),
                          st.dictionaries(st.text(max_size=4), json_values, max_size=3)), min_size=1, max_size=6))
def test_any_json_item_reads_back_as_written_references_and_escapes_included(tmp_path_factory, parts):
    folder = tmp_path_factory.mktemp("run")
    items = [Item(id=f"i{n}", engine="fake" if n % 2 else "other", inputs=inputs, gold=gold, meta={"n": n})
             for n, (inputs, gold) in enumerate(parts)]
    assert write_items(folder, iter(items), "fake") == len(items)
    one_by_one = RunItems(folder, "fake", "t", 2)
    assert [one_by_one.item(i) for i in range(len(items))] == items
    assert RunItems(folder, "fake", "t", 2).items() == items
    one_by_one.close()


def synthetic(n: int):
    """Items like dedc's: a question of their own and three demonstrations from a pool of 500."""
    rng = random.Random(n)
    pool = [f"demonstration {d}: " + "a question and its answer " * 5 for d in range(500)]
    for i in range(n):
        yield Item(id=f"s-{i}", engine="fake", inputs={"question": f"question {i}: " + "words " * 20,
                                                       "demonstrations": rng.sample(pool, 3)},
                   gold={"answer": f"answer {i} " * 10}, meta={"i": i})


def traced_peak(work) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_writing_a_run_keeps_tens_of_bytes_an_item_not_the_items(tmp_path):
    """Ten times the items: the writer's peak grows by what it keeps per distinct shared part (a
    digest and a place), under 100 bytes an item, where holding the items would take about 1 KB each."""
    def write(n: int):
        folder = tmp_path / str(n)
        folder.mkdir()
        return lambda: write_items(folder, synthetic(n), "fake")

    small, large = traced_peak(write(500)), traced_peak(write(5_000))
    assert large - small < 100 * 4_500, (small, large)


def test_dedc_generation_holds_no_sample_pool():
    """Item by item, four repeats cost no more memory than one: the pool's samples are made when drawn
    (they were held, about 1 KB each: 1.2 MB more for the 1,209 samples of three more repeats)."""
    engine = get_engine("dedc")
    list(engine.items(DedcSettings(repeat=1), 0))  # the per-process caches (DAGs, primitive demos) once

    def walk(repeat: int):
        return lambda: all(True for _ in engine.items(DedcSettings(repeat=repeat), 0))

    one, four = traced_peak(walk(1)), traced_peak(walk(4))
    assert four < one + 200_000, (one, four)


class Counted(OnDemand[Item]):
    def __init__(self, n: int):
        self.n, self.made = n, []

    def __len__(self) -> int:
        return self.n

    def element(self, index: int) -> Item:
        self.made.append(index)
        return Item(id=str(index), engine="fake", inputs={}, gold={})


def test_a_seeded_sample_makes_only_the_items_it_draws_and_draws_as_before():
    items = Counted(1000)
    chosen = chosen_items(items, None, 5, seed=7)
    assert items.made == [], "nothing is made before the store takes it"
    assert [int(item.id) for item in chosen] == sorted(random.Random(7).sample(range(1000), 5)) == items.made
    items = Counted(1000)
    assert [int(item.id) for item in chosen_items(items, 10, 3, seed=7)] == sorted(random.Random(7).sample(range(10), 3))
    assert len(items.made) == 3
    assert [item.id for item in chosen_items(Counted(4), None, 9, seed=7)] == ["0", "1", "2", "3"]


def test_the_runs_closing_check_reads_one_byte_an_item_from_disk():
    """Runner._settle's check of what is stored: the latest result of each item wins, and ten times the
    results cost no summaries in memory (a dict of them took about 430 bytes an item)."""
    def run_with(n: int) -> RunStore:
        store = create([Item(id=str(i), engine="fake", inputs={}, gold={}) for i in range(n)])
        store.acquire()
        for i in range(n - 1):
            store.add_result(i, {"id": str(i), "index": i, "status": "error" if i == 1 else "wrong", "scores": {},
                                 "tags": [], "outputs": ["x"]})
        store.flush()
        return store

    store = run_with(4)
    store.add_result(1, {"id": "1", "index": 1, "status": "correct", "scores": {}, "tags": [], "outputs": ["y"]})
    store.add_result(0, {"id": "0", "index": 0, "status": "error", "scores": {}, "tags": [], "outputs": []})
    store.close()
    assert list(stored_statuses(store.folder, 4)) == [ERROR, RESULT, RESULT, 0]
    small, large = run_with(2_000), run_with(20_000)
    for run in (small, large):
        run.close()
    peaks = [traced_peak(lambda: stored_statuses(run.folder, run.total)) for run in (small, large)]
    assert peaks[1] - peaks[0] < 4 * 18_000, peaks


def test_reading_every_brief_holds_the_briefs_and_a_block_of_lines_not_the_file(tmp_path):
    """``briefs()`` of 20,000 items peaks at what it returns plus about one block of lines: the whole
    brief file read, decoded and joined was about three times its size at once."""
    from sessions.store.items import BRIEF_BLOCK, ITEMS_BRIEF

    folder = tmp_path / "run"
    folder.mkdir()
    write_items(folder, (Item(id=f"s-{i}", engine="fake", inputs={}, gold={}, meta={"i": i, "note": f"{i:0200d}"})
                         for i in range(20_000)), "fake")
    reader = RunItems(folder, "fake", "run", items_format=2)
    gc.collect()
    tracemalloc.start()
    try:
        briefs = reader.briefs()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(briefs) == 20_000 and briefs[7]["meta"]["i"] == 7
    block = (folder / ITEMS_BRIEF).stat().st_size * BRIEF_BLOCK // 20_000  # bytes of one block of lines
    assert peak - held < 3 * block, (peak, held, block)


def test_briefs_share_equal_lists_and_keep_nested_ones(tmp_path):
    """Equal lists of a meta (a dedc item's primitives) are one list in a reading; a list holding lists or
    objects is read as it is."""
    folder = tmp_path / "run"
    folder.mkdir()
    metas = [{"p": ["add", "top_k"], "nested": [[1], {"a": 2}]}, {"p": ["add", "top_k"], "nested": [[1], {"a": 2}]},
             {"p": ["add"], "nested": []}] + [{}] * 4
    write_items(folder, (Item(id=f"s-{i}", engine="fake", inputs={}, gold={}, meta=m) for i, m in enumerate(metas)),
                "fake")
    reader = RunItems(folder, "fake", "run", items_format=2)
    # every brief, and two of seven (read line by line)
    for read in (reader.briefs(), [{"meta": item.meta} for item in dict(reader.iter_brief_items_at([0, 1])).values()]):
        assert [b["meta"] for b in read] == metas[:len(read)]
        assert read[0]["meta"]["p"] is read[1]["meta"]["p"] and read[0]["meta"]["nested"] is not read[1]["meta"]["nested"]


def test_reading_half_the_briefs_holds_that_half_and_a_block_not_the_other_half(tmp_path):
    """A report on a run stopped halfway reads the briefs of the items with a result: its peak is what it
    keeps plus a block's worth of passing data (the block's lines, their joined text, their parsed briefs
    before they are made compact) and its own dict growing. Reading the whole file and keeping half held
    every line parsed at once, several times the file's size."""
    from sessions.store.items import BRIEF_BLOCK, ITEMS_BRIEF

    folder = tmp_path / "run"
    folder.mkdir()
    write_items(folder, (Item(id=f"s-{i}", engine="fake", inputs={}, gold={}, meta={"i": i, "note": f"{i:0200d}"})
                         for i in range(20_000)), "fake")
    reader = RunItems(folder, "fake", "run", items_format=2)
    wanted = range(0, 20_000, 2)
    gc.collect()
    tracemalloc.start()
    try:
        items = dict(reader.iter_brief_items_at(wanted))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(items) == list(wanted) and items[4_000].meta["i"] == 4_000 and items[4_000].id == "s-4000"
    size = (folder / ITEMS_BRIEF).stat().st_size
    # a block is a few hundred KB here, the file 5 MB: what passes is a few blocks and the dict of items growing
    assert peak - held < max(6 * size * BRIEF_BLOCK // 20_000, size // 4), (peak, held, size)


def test_a_reports_metas_are_read_only_mappings_equal_to_the_parsed_ones_sharing_repeats(tmp_path):
    """``iter_brief_items_at`` keeps each meta as a tuple under its shape's keys: it reads, iterates, compares
    and converts as the parsed dict does; repeated strings, numbers and lists of strings are one object
    per reading, and a bool stays a bool beside an equal number."""
    from sessions.store.brief_meta import Meta

    folder = tmp_path / "run"
    folder.mkdir()
    metas = [{"kind": "view" * 3, "n": 1000 + i % 2, "flag": bool(i % 2), "one": 1, "p": ["add", "top_k"],
              "nested": [[i], {"a": 2}], "x": None} for i in range(6)] + [{"other": "shape"}]
    write_items(folder, (Item(id=f"s-{i}", engine="fake", inputs={}, gold={}, meta=m) for i, m in enumerate(metas)),
                "fake")
    items = dict(RunItems(folder, "fake", "run", items_format=2).iter_brief_items_at(range(7)))
    read = [items[i].meta for i in range(7)]
    assert all(isinstance(m, Meta) for m in read)
    assert read == metas and [dict(m) for m in read] == metas and list(read[0]) == list(metas[0])
    assert read[6].get("kind", "-") == "-" and "other" in read[6] and len(read[0]) == 7
    with pytest.raises(KeyError):
        read[0]["missing"]
    with pytest.raises(TypeError):
        read[0]["kind"] = "x"  # type: ignore[index]
    assert read[0]["kind"] is read[2]["kind"] and read[0]["n"] is read[2]["n"] and read[0]["p"] is read[3]["p"]
    assert read[1]["flag"] is True and read[0]["one"] == 1 and type(read[0]["one"]) is int
    assert read[0]["nested"] == [[0], {"a": 2}] and read[0]["nested"] is not read[2]["nested"]
    assert json.dumps(items[0].to_json()["meta"]) == json.dumps(metas[0])


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(alphabet="ab-1é", max_size=4), max_size=6), max_size=5), st.text(alphabet="ab-1é", max_size=5))
def test_item_ids_joined_read_as_the_list_of_them(blocks, probe):
    """``ItemIds`` (the ids joined, where each starts) reads, iterates, compares and finds as the list of
    the same ids: an id found is a whole id, never a piece of one or a join of two neighbours."""
    flat = [item_id for block in blocks for item_id in block]
    ids = ItemIds.of(blocks)
    assert len(ids) == len(flat) and list(ids) == flat and ids == flat and flat == ids
    assert [ids[i] for i in range(-len(flat), len(flat))] == flat + flat and ids[1:3] == flat[1:3]
    assert ids.longest(4) == max(map(len, flat), default=4) and ids.longest(-1) == max(map(len, flat), default=-1)
    with pytest.raises(IndexError):
        ids[len(flat)]
    if probe in flat:
        assert ids.index(probe) == flat.index(probe)
    else:
        with pytest.raises(ValueError):
            ids.index(probe)


def test_a_runs_item_ids_are_held_joined_and_found_whole(tmp_path):
    """The ids of 20,000 items: far smaller than a list of them (a string object an id), and a lookup by id
    (``find_item`` once they are read) finds the whole id, not an id it starts."""
    folder = tmp_path / "run"
    folder.mkdir()
    write_items(folder, (Item(id=f"s-{i}", engine="fake", inputs={}, gold={}, meta={}) for i in range(20_000)), "fake")
    reader = RunItems(folder, "fake", "run", items_format=2)
    gc.collect()
    tracemalloc.start()
    try:
        ids = reader.item_ids()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    listed = [f"s-{i}" for i in range(20_000)]
    assert isinstance(ids, ItemIds) and ids == listed
    as_list = sum(sys.getsizeof(i) for i in listed) + sys.getsizeof(listed)
    assert held < as_list / 3, (held, as_list)
    assert reader.find_item("s-1") == 1 and reader.find_item("s-19999") == 19_999 and reader.find_item("s-2000") == 2000
    assert reader.find_item("s-20000") is None and reader.find_item("-1") is None


@pytest.mark.parametrize("stored", [True, False], ids=["items.ids", "brief lines"])
def test_item_ids_are_read_from_line_starts_only(tmp_path, stored):
    """An id is the head of its brief line: a nested object with an "id" key in a meta, a line break or a
    quote inside an id, is not taken for another id; read from items.ids, or from the brief lines of a run
    written before items.ids existed."""
    folder = tmp_path / "run"
    folder.mkdir()
    ids = ['a"1', "b\n2", 'c\\"3', "d"]
    metas = [{"x": {"id": "not-an-item"}}, {"s": '\n{"id": "nor-this"}'}, {}, {"list": [{"id": "no"}]}]
    write_items(folder, (Item(id=i, engine="fake", inputs={}, gold={}, meta=m) for i, m in zip(ids, metas)), "fake")
    if not stored:
        (folder / ITEM_IDS).unlink()
    reader = RunItems(folder, "fake", "run", items_format=2)
    assert list(reader.item_ids()) == ids and reader.find_item('c\\"3') == 2


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab-1é\n\U0001F600", max_size=4), max_size=12))
def test_ids_written_read_back_as_they_were(ids):
    """What ``IdsWriter`` writes, ``ItemIds.from_bytes`` reads as the same ids (empty ones, line breaks and
    characters of several bytes included), and only for the count written."""
    from sessions.store.item_ids import IdsWriter, ItemIds

    handle = io.BytesIO()
    writer = IdsWriter(handle)
    for item_id in ids:
        writer.add(item_id)
    writer.close()
    data = handle.getvalue()
    assert ItemIds.from_bytes(data, len(ids)) == ids
    assert ItemIds.from_bytes(data, len(ids) + 1) is None and ItemIds.from_bytes(data[:-1], len(ids)) is None


def test_item_ids_come_from_items_ids_without_reading_the_brief_file(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir()
    ids = [f"it-{i}-é" for i in range(50)]
    write_items(folder, (Item(id=i, engine="fake", inputs={}, gold={}, meta={"n": 1}) for i in ids), "fake")
    monkeypatch.setattr(RunItems, "_brief_ids", lambda self: pytest.fail("the brief file was searched"))
    assert RunItems(folder, "fake", "run", items_format=2).item_ids() == ids


@pytest.mark.parametrize("damage", ["cut", "garbage", "fewer", "not utf-8", "starts out of order"])
def test_a_damaged_items_ids_is_passed_over_for_the_brief_file(tmp_path, damage):
    """items.ids that does not hold one id for each brief line, whole, is not read: the ids come from the
    brief file, as for a run written before items.ids existed."""
    folder = tmp_path / "run"
    folder.mkdir()
    ids = [f"it-{i}" for i in range(40)]
    write_items(folder, (Item(id=i, engine="fake", inputs={}, gold={}, meta={}) for i in ids), "fake")
    path = folder / ITEM_IDS
    data = path.read_bytes()
    text_end = len(data) - 4 * (len(ids) + 2)
    path.write_bytes({"cut": data[:-3], "garbage": b"\x00\x13" * 50, "not utf-8": b"\xff" + data[1:],
                      "fewer": data[:text_end] + data[text_end:-8] + (len(ids) - 1).to_bytes(4, "little"),
                      "starts out of order": data[:text_end] + data[text_end + 4:text_end + 8] + data[text_end:text_end + 4]
                      + data[text_end + 8:]}[damage])
    assert RunItems(folder, "fake", "run", items_format=2).item_ids() == ids


def test_the_owner_of_a_run_written_before_items_ids_writes_it(tmp_path):
    store = create([Item(id=f"x-{i}", engine="fake", inputs={}, gold={}, meta={}) for i in range(30)])
    (store.folder / ITEM_IDS).unlink()
    assert RunStore(store.folder).item_ids() == [f"x-{i}" for i in range(30)]
    owner = RunStore(store.folder)
    owner.acquire()
    owner.close()
    assert ItemIds.from_bytes((store.folder / ITEM_IDS).read_bytes(), 30) == [f"x-{i}" for i in range(30)]
