"""rgp instances: generated with the authors' rules, or loaded from their released files.

Generation follows the released ``generate_samples.py`` draw for draw, one
``random.Random(seed)`` per setting, so ``--seed 0`` reproduces the six official files
exactly (tested). Per instance:

1. cells per component: h row i; v column i; b the 2x2 block at ((i//2)*2, (i%2)*2);
   r a shuffle of the 16 cells, cells [4i, 4i+4); hr two rows drawn for their components
   (horizontal), the other two components take 4 shuffled cells each from the other rows;
2. values: ``v = choice(0..15)``; the two values paint v and its complement v ^ 15 (MSB
   first);
3. ri (index shuffle, on h): the order of components is shuffled until it is not the
   identity; component i paints the cells of ``input_index[i]``;
4. the 16 samples are all 16 inputs, in an order drawn by ``sample``.

Official files: ``k=4_u=2_d=16_type=T.jsonl`` (``input``/``output`` lists) and the
``.meta.jsonl`` beside it (the rule). Without a meta file the rule is inferred from the
samples (it only feeds the oracle and the simulator).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

from engines.core import DataError, Item
from engines.rgp.grids import CELLS, K, SIDE, Rule, infer_rule, input_text
from engines.rgp.settings import SETTING_LABELS, SETTINGS, RgpSettings

ENGINE = "rgp"
FILE_TYPES = {"h": "h", "v": "v", "b": "b", "r": "r", "hr": "hr", "ri": "h_index-shuffle"}


def data_file_name(setting: str) -> str:
    return f"k=4_u=2_d=16_type={FILE_TYPES[setting]}.jsonl"


# -------------------------------------------------------------------- generation


def _control(setting: str, rng: random.Random) -> list[list[tuple[int, int]]]:
    if setting in ("h", "ri"):
        return [[(i, j) for j in range(SIDE)] for i in range(K)]
    if setting == "v":
        return [[(j, i) for j in range(SIDE)] for i in range(K)]
    if setting == "b":
        return [[((i // 2) * 2 + x, (i % 2) * 2 + y) for x in range(2) for y in range(2)] for i in range(K)]
    if setting == "r":
        cells = list(CELLS)
        rng.shuffle(cells)
        return [cells[SIDE * i:SIDE * (i + 1)] for i in range(K)]
    if setting == "hr":
        rows = rng.sample(list(range(K)), K // 2)
        control: list[list[tuple[int, int]]] = [[] for _ in range(K)]
        for row in rows:
            control[row] = [(row, j) for j in range(SIDE)]
        rest = [cell for cell in CELLS if cell[0] not in rows]
        rng.shuffle(rest)
        others = [i for i in range(K) if i not in rows]
        for n, i in enumerate(others):
            control[i] = rest[SIDE * n:SIDE * (n + 1)]
        return control
    raise ValueError(setting)


def _bits(value: int) -> tuple[int, ...]:
    return tuple((value >> shift) & 1 for shift in range(SIDE - 1, -1, -1))


def generate_instance(setting: str, rng: random.Random) -> tuple[Rule, list[tuple[str, str]]]:
    """One instance: its rule and its 16 (input, grid) samples in the drawn order."""
    control = _control(setting, rng)
    value_bits = []
    for _ in range(K):
        v = rng.choice(list(range(2 ** SIDE)))
        value_bits.append((_bits(v), _bits(v ^ (2 ** SIDE - 1))))
    index = list(range(K))
    if setting == "ri":
        while index == list(range(K)):
            rng.shuffle(index)
    rule = Rule(tuple(tuple(cells) for cells in control), tuple(value_bits), tuple(index))
    every = []
    for b in range(2 ** K):
        values = [(b >> shift) & 1 for shift in range(K - 1, -1, -1)]
        every.append((input_text(values), rule.render(values)))
    return rule, rng.sample(every, len(every))


def _item(setting: str, index: int, rule: Rule, samples: Sequence[tuple[str, str]], source: str) -> Item:
    return Item(
        id=f"rgp-{setting}-{index:03d}",
        engine=ENGINE,
        inputs={"samples": [{"input": text, "output": grid} for text, grid in samples]},
        gold={"rule": rule.to_json(), "rule_text": rule.describe()},
        meta={"setting": setting, "setting_label": SETTING_LABELS[setting], "index": index, "source": source},
    )


def generate_items(settings: RgpSettings, seed: int) -> list[Item]:
    items = []
    for setting in SETTINGS if settings.setting == "all" else (settings.setting,):
        rng = random.Random(seed)
        for index in range(settings.count):
            rule, samples = generate_instance(setting, rng)
            items.append(_item(setting, index, rule, samples, "generated"))
    return items


# ----------------------------------------------------------------- official data


def _read_jsonl(path: Path) -> list[Any]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"rgp dataset file not found: {path}") from None
    except OSError as exc:
        raise DataError(f"cannot read rgp dataset file {path}: {exc.strerror or exc}") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}: line {number}: not JSON ({exc.msg})") from None
    return rows


def setting_of_file(path: Path) -> str:
    for setting, file_type in FILE_TYPES.items():
        if path.name == f"k=4_u=2_d=16_type={file_type}.jsonl":
            return setting
    raise DataError(f"{path.name}: not an rgp dataset file name (k=4_u=2_d=16_type=T.jsonl, "
                    f"T one of {', '.join(FILE_TYPES.values())})")


def load_file(path: Path, count: int | None = None) -> list[Item]:
    """One official file in its order, with the rule of each instance from the .meta.jsonl beside it."""
    setting = setting_of_file(path)
    rows = _read_jsonl(path)[:count]
    meta_path = path.with_name(path.name[: -len(".jsonl")] + ".meta.jsonl")
    metas = _read_jsonl(meta_path) if meta_path.exists() else []
    items = []
    for index, row in enumerate(rows):
        where = f"{path}: line {index + 1}"
        try:
            samples = list(zip(row["input"], row["output"], strict=True))
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{where}: expected {{\"input\": [...], \"output\": [...]}} of equal length") from None
        if len(samples) != 2 ** K or not all(isinstance(t, str) and isinstance(g, str) for t, g in samples):
            raise DataError(f"{where}: expected 16 string samples")
        rule = None
        if index < len(metas):
            try:
                rule = Rule.from_json(metas[index])
            except ValueError as exc:
                raise DataError(f"{meta_path}: line {index + 1}: {exc}") from None
        rule = rule or infer_rule(samples)
        if rule is None:
            raise DataError(f"{where}: no .meta.jsonl rule and no per-component rule fits the samples")
        if any(rule.apply(text) != grid for text, grid in samples):
            raise DataError(f"{where}: the rule in {meta_path.name} does not reproduce the samples")
        items.append(_item(setting, index, rule, samples, f"official:{path.name}"))
    return items


def load_dataset(settings: RgpSettings) -> list[Item]:
    """A file, or a folder: every official file in it (Table 1 then Table 2 order), or the chosen setting's."""
    path = Path(settings.dataset).expanduser()
    if not path.is_dir():
        return load_file(path, settings.count)
    wanted = SETTINGS if settings.setting == "all" else (settings.setting,)
    files = [path / data_file_name(s) for s in wanted if (path / data_file_name(s)).exists()]
    if not files:
        raise DataError(f"{path}: no rgp dataset files (k=4_u=2_d=16_type=T.jsonl) for setting {settings.setting}")
    return [item for f in files for item in load_file(f, settings.count)]


def build_items(settings: RgpSettings, seed: int) -> list[Item]:
    return load_dataset(settings) if settings.dataset else generate_items(settings, seed)
