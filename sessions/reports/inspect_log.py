"""A run as an Inspect AI evaluation log (``.eval``): what ``read_eval_log`` reads and ``inspect view`` shows.

One sample per item, in run order: its input (the first model step's messages), the whole
exchange (every step's prompt and reply, a tool step's result as a tool message), the
model's last reply as the output, the gold as the target, and two scores: ``verdict``
(``C`` for correct, ``I`` for wrong or unparseable, the status and the tags' evidence in
its metadata and explanation) and ``scores`` (the engine's own per-item scores). Items in
status ``error`` carry the error and no score, pending items neither, so Inspect leaves
both out of its metrics exactly as n2f leaves them out of the accuracy. The sample's
metadata holds the item's fields, the tags with evidence, the final tags and the notes.

The log's header holds the run's settings (as task arguments), the model, its sampling
parameters, base URL and usage, the package versions and the revision (``sessions.run.provenance``).
The metrics are Inspect's own (``accuracy`` and ``stderr`` of the verdict, the ``mean`` of each
engine score), computed by ``inspect_ai.log.recompute_metrics`` from the samples.

Inspect's public writer takes a whole log, so this export holds the run's samples in memory
(the flat exports stream); it needs the ``[inspect]`` extra, imported only here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, cast

from engines import get_engine
from sessions.errors import InputError
from sessions.reports.export import RunReader, plan_columns
from sessions.store.files import atomic_target
from sessions.store.runs import RunStore

if TYPE_CHECKING:
    from inspect_ai.log._log import EvalScorer  # not exported by inspect_ai.log

SCORED = ("correct", "wrong", "unparseable")
GENERATE_KEYS = ("temperature", "max_tokens", "top_p", "seed")


def inspect_model(spec: str) -> str:
    """Inspect names models ``provider/model``: ``openai:gpt-4o-mini@URL`` -> ``openai/gpt-4o-mini``, ``sim`` -> ``n2f/sim``."""
    kind, _, rest = spec.partition(":")
    if kind == "openai" and rest:
        return f"openai/{rest.split('@', 1)[0]}"
    return f"n2f/{kind or 'sim'}"


def _target(gold: Any) -> str:
    only = next(iter(gold.values())) if isinstance(gold, Mapping) and len(gold) == 1 else None
    if isinstance(only, str):
        return only
    return json.dumps(gold, ensure_ascii=False)


def _messages(steps: list[dict[str, Any]], outputs: list[str]) -> tuple[list[Any], list[Any]]:
    """(the input: the first model step's messages, the whole exchange with every reply and tool result)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    first: list[Any] = []
    exchange: list[Any] = []
    for index, step in enumerate(steps):
        reply = outputs[index] if index < len(outputs) else None
        if step["kind"] == "tool":
            if reply is not None:
                exchange.append(ChatMessageTool(content=reply, function=step["tool"]))
            continue
        asked = [kinds.get(m["role"], ChatMessageUser)(content=m["content"]) for m in step["messages"]]
        first = first or list(asked)
        exchange += asked + ([ChatMessageAssistant(content=reply)] if reply is not None else [])
    return first, exchange


def _sample(row: dict[str, Any], steps: list[dict[str, Any]], record: dict[str, Any], model: str) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    outputs = row["outputs"]
    first, exchange = _messages(steps, outputs)
    replies = [outputs[i] for i, s in enumerate(steps) if s["kind"] == "model" and i < len(outputs)]
    status = row["status"]
    scores = None
    if status in SCORED:
        scores = {"verdict": Score(value="C" if status == "correct" else "I", answer=replies[-1] if replies else "",
                                   explanation="\n".join(row["tag_evidence"]) or status, metadata={"status": status}),
                  "scores": Score(value={k: float(v) for k, v in record.get("scores", {}).items()})}
    tokens = row["prompt_tokens"] + row["completion_tokens"]
    usage = ({model: ModelUsage(input_tokens=row["prompt_tokens"], output_tokens=row["completion_tokens"],
                                total_tokens=tokens)} if tokens else {})
    metadata = {"status": status, "item": {k[len("meta_"):]: v for k, v in row.items() if k.startswith("meta_")},
                "tags": record.get("tags", []), "final_tags": row["final_tags"], "final_source": row["final_source"],
                "reviewed": row["reviewed"], "notes": row["notes"], "finish_reasons": row["finish_reasons"],
                "cached_steps": row["cached_steps"]}
    error = EvalError(message=row["error"], traceback="", traceback_ansi="") if status == "error" else None
    return EvalSample(id=row["id"], epoch=1, input=first or "", target=_target(row["gold"]), messages=exchange,
                      output=ModelOutput.from_content(model, replies[-1] if replies else ""), scores=scores,
                      metadata=metadata, model_usage=usage, error=error)


def _spec(store: RunStore, samples: list[Any], model: str) -> Any:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalRevision, EvalSpec
    from inspect_ai.model import GenerateConfig

    meta = store.meta
    engine = get_engine(meta["engine"])
    provenance = meta.get("provenance") or {}
    revision = provenance.get("revision")
    score_keys = sorted({k for s in samples if s.scores for k in s.scores["scores"].value})
    always = [k for k in score_keys if all(k in s.scores["scores"].value for s in samples if s.scores)]
    return EvalSpec(
        eval_id=meta["id"], run_id=meta["id"], task_id=meta["id"], created=meta["created"], task=f"n2f/{engine.name}",
        task_display_name=engine.title, task_args=dict(meta.get("settings", {})),
        dataset=EvalDataset(name=engine.name, samples=len(samples), sample_ids=[s.id for s in samples]),
        model=model, model_base_url=(meta.get("backend") or {}).get("base_url") or None,
        model_args={"n2f_model": meta.get("model", "")},
        model_generate_config=GenerateConfig(**{k: v for k, v in (meta.get("params") or {}).items() if k in GENERATE_KEYS}),
        config=EvalConfig(), packages=dict(meta.get("versions", {})),
        revision=EvalRevision(type="git", origin=revision.get("origin", ""), commit=revision["commit"],
                              dirty=revision.get("dirty")) if revision else None,
        metadata={"n2f": {"run": meta["id"], "name": meta.get("name", ""), "seed": meta.get("seed"),
                          "status": meta.get("status", ""), "template_hashes": meta.get("template_hashes", {}),
                          "provenance": provenance}},
        scorers=cast("list[EvalScorer]", [  # dicts, which pydantic validates into EvalScorers
            {"name": "verdict", "metrics": [{"name": "inspect_ai/accuracy"}, {"name": "inspect_ai/stderr"}]},
            {"name": "scores", "metrics": {k: [{"name": "inspect_ai/mean"}] for k in always}}]),
    )


def eval_log(store: RunStore) -> Any:
    """The run's ``EvalLog``, its metrics computed by Inspect from the samples."""
    from inspect_ai.log import EvalLog, EvalPlan, EvalStats, recompute_metrics
    from inspect_ai.model import ModelUsage

    model = inspect_model(store.meta.get("model", "sim"))
    samples = [_sample(row, steps, record, model)
               for row, steps, record in RunReader(store, plan_columns([store])).entries()]
    totals = {"input_tokens": sum(s.model_usage[model].input_tokens for s in samples if s.model_usage),
              "output_tokens": sum(s.model_usage[model].output_tokens for s in samples if s.model_usage)}
    usage = {model: ModelUsage(**totals, total_tokens=sum(totals.values()))} if any(totals.values()) else {}
    log = EvalLog(status="success" if store.meta.get("status") == "finished" else "cancelled",
                  eval=_spec(store, samples, model), plan=EvalPlan(), samples=samples,
                  stats=EvalStats(started_at=store.meta["created"], completed_at=store.meta.get("updated", ""),
                                  model_usage=usage))
    recompute_metrics(log)
    return log


def write_inspect_log(store: RunStore, out: str) -> None:
    try:
        from inspect_ai.log import write_eval_log
    except ImportError:
        raise InputError("--format inspect needs Inspect AI: pip install 'n2f-tui[inspect]'") from None
    if not out.endswith(".eval"):
        raise InputError(f"{out}: an Inspect log file ends in .eval")
    log = eval_log(store)
    try:
        with atomic_target(Path(out)) as target:
            write_eval_log(log, str(target), format="eval")
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from None
