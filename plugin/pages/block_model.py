"""The block model: gradient-boosted trees read from a LightGBM JSON dump, walked in pure Python.

The shipped model (``block_model.json`` beside this module) was trained by
``bench/train_extraction.py`` on the WCXB development split (Web Content eXtraction Benchmark,
2026, Murrough Foley, CC-BY-4.0). It is the dump of ``lightgbm.Booster.dump_model()`` with what
prediction does not need left out (gains, counts, internal values), plus a ``pi_web_tools`` entry:
the feature names it was trained on, the score below which the filter drops a line, and the
data's credit.

:func:`load` reads it on first use, once per process (the extraction worker), never at plugin
import. A missing, unreadable or mismatched file gives ``None``, and extraction keeps the rules'
text unchanged. Nothing here needs numpy or LightGBM: a tree walk is a few comparisons, made
exactly as LightGBM's ``Tree::NumericalDecision`` and ``CategoricalDecision`` make them (a
missing value, NaN, follows ``default_left`` where the split's ``missing_type`` is ``NaN``, and
counts as 0 otherwise; with ``missing_type`` ``Zero``, a value within 1e-35 of 0 follows
``default_left``).
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

__all__ = ["MODEL_ENV", "MODEL_FILE", "Model", "ModelError", "load", "read"]

#: The shipped model.
MODEL_FILE = Path(__file__).with_name("block_model.json")
#: An environment variable naming another model file (``bench/extract.py`` scores each page of
#: the training data with the model of a fold that did not see its site).
MODEL_ENV = "PI_WEB_TOOLS_BLOCK_MODEL"
_ZERO = 1e-35  # LightGBM's kZeroThreshold
_NUMERIC, _ZERO_MISSING, _NAN_MISSING, _CATEGORICAL = 0, 1, 2, 3


class ModelError(ValueError):
    """A model file that cannot be used; the message says why."""


class Model:
    """Trees of a LightGBM dump (``dump_model()``'s dict) that score rows of floats."""

    def __init__(self, dump: dict):
        try:
            self.feature_names = tuple(dump["feature_names"])
            self.objective = str(dump.get("objective", "")).split()[0] if dump.get("objective") else ""
            self.average = bool(dump.get("average_output"))
            trees = dump["tree_info"]
            self.trees = [_node(tree["tree_structure"]) for tree in trees]
            self.meta = dict(dump.get("pi_web_tools") or {})
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ModelError(f"not a LightGBM model dump ({type(exc).__name__}: {exc})") from None
        if int(dump.get("num_class", 1)) != 1:
            raise ModelError("only single-output models are supported")
        self.sigmoid = 1.0
        for part in str(dump.get("objective", "")).split():
            if part.startswith("sigmoid:"):
                self.sigmoid = float(part.split(":", 1)[1])

    def raw(self, row) -> float:
        """The sum of the trees' leaf values for *row* (LightGBM's ``raw_score``)."""
        total = 0.0
        for node in self.trees:
            while node.__class__ is tuple:
                feature, threshold, mode, default_left, left, right = node
                value = row[feature]
                if mode == _NUMERIC:
                    if value != value:
                        value = 0.0
                    node = left if value <= threshold else right
                elif mode == _CATEGORICAL:
                    if value != value or int(value) < 0:
                        node = right
                    else:
                        node = left if int(value) in threshold else right
                elif mode == _NAN_MISSING:
                    if value != value:
                        node = left if default_left else right
                    else:
                        node = left if value <= threshold else right
                else:  # _ZERO_MISSING
                    if value != value:
                        value = 0.0
                    if -_ZERO < value <= _ZERO:
                        node = left if default_left else right
                    else:
                        node = left if value <= threshold else right
            total += node
        if self.average and self.trees:
            total /= len(self.trees)
        return total

    def predict(self, row) -> float:
        """The model's prediction for *row*: a probability for a binary model, else the raw
        score."""
        raw = self.raw(row)
        if self.objective in ("binary", "cross_entropy", "xentropy"):
            return 1.0 / (1.0 + math.exp(-self.sigmoid * raw))
        return raw


def _node(tree: dict):
    """A tree as nested tuples ``(feature, threshold, mode, default_left, left, right)``, its
    leaves as floats."""
    stack = [(tree, None, 0)]
    built: dict[int, object] = {}
    order = []
    while stack:  # no recursion: a deep tree must not exhaust the stack
        node, _, _ = stack.pop()
        order.append(node)
        if "leaf_value" not in node:
            stack.append((node["left_child"], None, 0))
            stack.append((node["right_child"], None, 0))
    for node in reversed(order):
        if "leaf_value" in node:
            built[id(node)] = float(node["leaf_value"])
            continue
        decision = node.get("decision_type", "<=")
        missing = node.get("missing_type", "None")
        if decision == "==":
            mode = _CATEGORICAL
            threshold = frozenset(int(x) for x in str(node["threshold"]).split("||") if x != "")
        elif decision == "<=":
            mode = {"None": _NUMERIC, "Zero": _ZERO_MISSING, "NaN": _NAN_MISSING}[missing]
            threshold = float(node["threshold"])
        else:
            raise ValueError(f"unknown decision type {decision!r}")
        built[id(node)] = (
            int(node["split_feature"]),
            threshold,
            mode,
            bool(node.get("default_left", False)),
            built[id(node["left_child"])],
            built[id(node["right_child"])],
        )
    return built[id(tree)]


_lock = threading.Lock()
_loaded: dict[str, object] = {}


def load(path: Path | str | None = None, feature_names: tuple[str, ...] | None = None):
    """The model in *path* (default: the file :data:`MODEL_ENV` names, else the shipped one),
    read once per process; ``None`` when the file is missing, unreadable, or was trained on
    other features than *feature_names*."""
    key = str(path or os.environ.get(MODEL_ENV) or MODEL_FILE)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        try:
            model = read(Path(key))
            if feature_names is not None and model.feature_names != tuple(feature_names):
                raise ModelError("the model was trained on other features")
        except (OSError, ValueError):
            model = None
        _loaded[key] = model
        return model


def read(path: Path) -> Model:
    """The model in *path*; raises ``OSError`` or :class:`ModelError` (a ``ValueError``)."""
    with open(path, encoding="utf-8") as handle:
        try:
            dump = json.load(handle)
        except (ValueError, RecursionError) as exc:
            raise ModelError(f"not JSON ({exc})") from None
    if not isinstance(dump, dict):
        raise ModelError("not a LightGBM model dump")
    return Model(dump)
