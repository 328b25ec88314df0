"""The new-run dialog's last choices, kept in the data dir so the next opening starts from them.

One small JSON file (``newrun.json``): the engine last chosen, the run fields (model,
limit, concurrency, seed) and each engine's settings as the user typed them. Values are
kept as text and validated only when a run starts, by the same checks as the CLI; a
missing or unreadable file means "nothing remembered", never an error. The file is
replaced atomically, so two windows saving at once leave one of the two whole.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from sessions.store.files import atomic_write_text
from sessions.paths import data_home

FILE = "newrun.json"


@dataclass
class FormMemory:
    engine: str = ""
    fields: dict[str, str] = field(default_factory=dict)  # model, limit, concurrency, seed
    settings: dict[str, dict[str, str]] = field(default_factory=dict)  # engine -> setting -> text


def load_form_memory() -> FormMemory:
    try:
        data = json.loads((data_home() / FILE).read_text(encoding="utf-8"))
        return FormMemory(engine=str(data.get("engine", "")),
                          fields={str(k): str(v) for k, v in dict(data.get("fields", {})).items()},
                          settings={str(e): {str(k): str(v) for k, v in dict(s).items()}
                                    for e, s in dict(data.get("settings", {})).items()})
    except (OSError, ValueError, TypeError, AttributeError):
        return FormMemory()


def save_form_memory(memory: FormMemory) -> None:
    """Best effort: a read-only data dir loses the memory, not the run being started."""
    try:
        home = data_home()
        home.mkdir(parents=True, exist_ok=True)
        atomic_write_text(home / FILE, json.dumps(asdict(memory), ensure_ascii=False, indent=1))
    except OSError:
        pass

