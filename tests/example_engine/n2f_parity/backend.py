"""An example model backend: ``-m always:WORD`` answers every step with WORD (default ``even``).

Registered under the entry point ``always`` of the group ``n2f_tui.backends``; a real provider
would send ``request.step.messages`` to its model here and return the reply.
"""

from __future__ import annotations

from typing import Any

from sessions.backends.base import Backend, CallRequest, Completion, ModelSpec
from sessions.backends.models import BackendKind


class AlwaysBackend(Backend):
    def __init__(self, spec: ModelSpec):
        self.spec = spec

    async def complete(self, request: CallRequest) -> Completion:
        return Completion(text=self.spec.name or "even", usage={"prompt_tokens": 1, "completion_tokens": 1})


def make(spec: ModelSpec, engine: Any, seed: int, config: Any, cache: Any) -> Backend:
    return AlwaysBackend(spec)


ALWAYS = BackendKind("always[:WORD]", lambda text, rest: ModelSpec("always", name=rest), make)
