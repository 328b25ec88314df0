"""Re-running one item with an edited prompt: attempts kept apart from the run; forking a run."""

from __future__ import annotations

import pytest

from engines import get_engine
from engines.core import SettingsError
from sessions.api import item_detail, prepare_resume, prepare_run
from sessions.run.attempts import fork_with_templates, list_attempts, rerun_item
from sessions.backends.base import Backend, BackendError, Completion, ModelSpec
from sessions.store.runs import RunStore
from stub_openai import running_stub

EDITED = "EDITED PROMPT\nQuestion: {question}\nAnswer:"


async def finished_run(n=3, model="sim:error_rate=0.5", name=""):
    prepared = await prepare_run("dedc", model=model, limit=n, name=name)
    await prepared.runner.run()
    prepared.store.close()
    await prepared.backend.aclose()
    return RunStore.open(prepared.store.id)


class RecordingBackend(Backend):
    """Answers with the gold and records every request; fails while ``broken`` is set."""

    def __init__(self, engine, broken=False):
        self.spec = ModelSpec("recording")
        self.engine = engine
        self.broken = broken
        self.requests = []

    async def complete(self, request):
        self.requests.append(request)
        if self.broken:
            raise BackendError("server said 503")
        return Completion(text=self.engine.oracle(request.item, request.step, request.outputs))


def prompt_text(attempt):
    return attempt["prompts"][0]["messages"][0]["content"]


async def test_edited_template_changes_the_prompt_sent_and_stored():
    store = await finished_run()
    item = store.items()[1]
    attempt = await rerun_item(store, 1, {"answer": EDITED})
    assert attempt["attempt_id"] == 1 and attempt["item"] == item.id and attempt["index"] == 1
    assert prompt_text(attempt) == f"EDITED PROMPT\nQuestion: {item.inputs['question']}\nAnswer:"
    assert attempt["templates"]["answer"] == EDITED
    assert attempt["status"] in ("correct", "wrong", "unparseable") and "correct" in attempt["scores"]
    assert len(attempt["outputs"]) == 1 and attempt["time"]

    backend = RecordingBackend(get_engine("dedc"))
    attempt = await rerun_item(store, 1, {"answer": "Only: {question}"}, backend=backend)
    (request,) = backend.requests
    assert [m.content for m in request.step.messages] == [f"Only: {item.inputs['question']}"]
    assert attempt["status"] == "correct" and attempt["scores"] == {"correct": 1.0}
    assert attempt["attempt_id"] == 2


async def test_attempts_accumulate_survive_reopening_and_leave_results_alone():
    store = await finished_run()
    results_files = [store.folder / "results.jsonl", store.folder / "results.index.jsonl"]
    before = [f.read_bytes() for f in results_files]
    item_id = store.items()[0].id
    backend = RecordingBackend(get_engine("dedc"))
    for _ in range(3):
        await rerun_item(store, 0, {"answer": EDITED}, backend=backend)
    assert [r.attempt for r in backend.requests] == [1, 2, 3]  # never the run's attempt 0: no stale cache hit
    assert [f.read_bytes() for f in results_files] == before
    reopened = RunStore.open(store.id)
    assert [a["attempt_id"] for a in list_attempts(reopened, item_id)] == [1, 2, 3]
    assert list_attempts(reopened, store.items()[1].id) == []
    assert reopened.results() == store.results()


async def test_backend_failure_is_an_error_attempt():
    store = await finished_run(n=1)
    backend = RecordingBackend(get_engine("dedc"), broken=True)
    attempt = await rerun_item(store, 0, {}, backend=backend)
    assert attempt["status"] == "error" and attempt["error"] == "server said 503"
    assert attempt["scores"] == {} and attempt["tags"] == [] and attempt["outputs"] == []
    assert len(attempt["prompts"]) == 1  # the prompt that failed is kept for debugging
    assert list_attempts(store, store.items()[0].id) == [attempt]


async def test_unknown_placeholder_raises_settings_error_and_stores_nothing():
    store = await finished_run(n=1)
    with pytest.raises(SettingsError, match=r"\{nope\}"):
        await rerun_item(store, 0, {"answer": "Q: {nope}"})
    assert list_attempts(store, store.items()[0].id) == []
    with pytest.raises(SettingsError):
        fork_with_templates(store, {"answer": "Q: {nope}"})


async def test_openai_reruns_reach_the_model_despite_the_response_cache():
    with running_stub(reply=lambda messages: "f0(attr_1)") as stub:
        store = await finished_run(n=1, model=f"openai:stub-model@{stub.base_url}")
        assert len(stub.chat_requests()) == 1
        await rerun_item(store, 0, {})  # the run's own template: the cache holds its reply
        await rerun_item(store, 0, {})
        assert len(stub.chat_requests()) == 3


async def test_fork_then_resume_runs_every_item_with_the_new_template():
    store = await finished_run(n=3)
    fork = fork_with_templates(store, {"answer": EDITED}, name="edited")
    assert fork.id != store.id and fork.label == "edited"
    assert fork.meta["status"] == "created" and fork.results() == {}
    assert fork.meta["forked_from"] == store.id
    for key in ("engine", "settings", "seed", "model"):
        assert fork.meta[key] == store.meta[key]
    assert fork.meta["templates"]["answer"] == EDITED
    assert [i.to_json() for i in RunStore.open(fork.id).items()] == [i.to_json() for i in store.items()]

    prepared = await prepare_resume(fork.id)
    progress = await prepared.runner.run()
    prepared.store.close()
    assert progress.done == 3
    forked = RunStore.open(fork.id)
    assert sorted(forked.results()) == [0, 1, 2] and forked.meta["status"] == "finished"
    assert item_detail(forked, 2).prompts[0]["messages"][0]["content"].startswith("EDITED PROMPT\n")
    assert not item_detail(store, 2).prompts[0]["messages"][0]["content"].startswith("EDITED")
