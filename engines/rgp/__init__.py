"""RGP (rule-generation perspective): the model writes one Python program for 16 samples.

String-to-grid with k = 4 components of u = 2 values: the model sees all 16 samples and
writes a program; the program's compositionality C(P) combines how many of the samples
it gets wrong, E(P), with the size of the mapping table P+ it encodes, read from its
source by static analysis.

Two steps per item: step 1 asks the model for the program; step 2 is a tool step
(``python_sandbox``) that the sessions layer executes: the extracted program on each
of the 16 inputs, in the sandbox. Scoring reads both outputs and runs nothing.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from engines.contract import Engine, EngineParts
from engines.core import Item, Status, Step
from engines.rgp import prompts
from engines.rgp.grids import K, U
from engines.rgp.parse import extract_program, syntax_problem
from engines.rgp.settings import RgpSettings

SANDBOX_TOOL = "python_sandbox"
RUN = "run"
SAMPLES = U ** K


class RgpEngine(Engine[RgpSettings]):
    name = "rgp"
    title = "RGP: compositionality of the programs models write for string-to-grid samples"
    settings_type = RgpSettings
    main_score = "C"
    rank = 3
    tools = (SANDBOX_TOOL,)
    report_reads_outputs = True  # the sandbox's isolation level is reported

    def load_parts(self) -> EngineParts[RgpSettings]:
        from engines.rgp import generate, paper, score, simulate, tags, views

        return EngineParts(build_items=generate.build_items, templates=prompts.templates, score_item=score.score_item,
                           taxonomy=tags.TAXONOMY, metrics=views.METRICS, aggregate=score.aggregate, simulate=simulate.simulate,
                           oracle=simulate.oracle,
                           paper=paper.PAPER)

    def next_step(self, item: Item, settings: RgpSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        """Step 1 asks for the program; step 2 runs it on the 16 inputs, if it is Python at all."""
        if not outputs:
            prompt = prompts.build_prompt(item, (templates or {}).get(prompts.PROGRAM))
            return self.model_step(prompts.PROGRAM, prompt, settings)
        if len(outputs) > 1:
            return None
        program = extract_program(outputs[0]).program
        if not program or syntax_problem(program) is not None:
            return None
        payload = {"program": program, "inputs": [s["input"] for s in item.inputs["samples"]],
                   "timeout": settings.timeout}
        return Step(name=RUN, kind="tool", tool=SANDBOX_TOOL, payload=payload)

    def list_score(self, status: Status, scores: Mapping[str, float]) -> float | None:
        """The share of the 16 samples the program gets right, 1 - E/16: 1 exactly when the item is
        correct (E = 0). C(P), on 0..100, is not monotone with the status (a correct lookup table
        scores low), so it stays the compared score, not the listed one."""
        errors = scores.get("E")
        return None if errors is None else 1.0 - errors / SAMPLES


ENGINE = RgpEngine()
