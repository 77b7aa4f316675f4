"""The block model's loader and pure-Python tree walk."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from pi_web_tools.pages import block_model, blocks

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_model.json"


def _fixture():
    dump = json.loads(FIXTURE.read_text())
    expected = dump.pop("expected")
    rows = [[math.nan if v is None else v for v in row] for row in expected["rows"]]
    return block_model.Model(dump), rows, expected


def test_the_tree_walk_gives_lightgbms_own_raw_scores_and_probabilities():
    """The fixture (written by bench/train_extraction.py --fixture) holds a LightGBM model with
    NaN-missing, zero-heavy and categorical splits, and LightGBM's predictions on rows that
    reach every kind of branch (NaN, -0.0, 1e-40, an unseen and a negative category)."""
    model, rows, expected = _fixture()
    assert len(rows) == len(expected["raw"]) >= 40
    for row, raw, probability in zip(rows, expected["raw"], expected["probability"]):
        assert model.raw(row) == pytest.approx(raw, rel=1e-12, abs=1e-12)
        assert model.predict(row) == pytest.approx(probability, rel=1e-12, abs=1e-12)


def test_the_fixture_exercises_categorical_and_missing_value_splits():
    text = FIXTURE.read_text()
    assert '"decision_type":"=="' in text and '"missing_type":"NaN"' in text


def test_a_missing_model_file_loads_as_none(tmp_path):
    assert block_model.load(tmp_path / "absent.json") is None


@pytest.mark.parametrize(
    "content",
    ["", "{not json", "[1, 2]", '{"feature_names": ["a"]}', '{"feature_names": ["a"], '
     '"tree_info": [{"tree_structure": {"split_feature": 0, "threshold": 1, '
     '"decision_type": "<", "left_child": {"leaf_value": 1}, "right_child": {"leaf_value": 0}}}]}',
     "[" * 100000],
)
def test_a_broken_model_file_loads_as_none(tmp_path, content):
    path = tmp_path / "broken.json"
    path.write_text(content)
    assert block_model.load(path) is None


def test_a_model_trained_on_other_features_loads_as_none(tmp_path):
    path = tmp_path / "other.json"
    dump = json.loads(FIXTURE.read_text())
    path.write_text(json.dumps(dump))
    assert block_model.load(path) is not None
    assert block_model.load(path, feature_names=blocks.FEATURE_NAMES) is not None  # cached
    other = tmp_path / "other2.json"
    other.write_text(json.dumps(dump))
    assert block_model.load(other, feature_names=blocks.FEATURE_NAMES) is None


def test_the_shipped_model_loads_credits_its_data_and_stays_small():
    path = block_model.MODEL_FILE
    assert path.stat().st_size <= 2 * 1024 * 1024
    model = block_model.read(path)
    assert model.feature_names == blocks.FEATURE_NAMES
    assert "CC-BY-4.0" in model.meta["credit"] and "WCXB" in model.meta["credit"]
    assert 0.0 < float(model.meta["threshold"]) < 1.0
    assert 0.0 <= model.predict([0.0] * len(blocks.FEATURE_NAMES)) <= 1.0


def test_the_shipped_model_is_package_data():
    """A non-editable install carries the model file (pyproject's package-data)."""
    pyproject = Path(block_model.__file__).parents[2] / "pyproject.toml"
    if not pyproject.exists():  # an installed copy: the file itself is the proof
        assert block_model.MODEL_FILE.exists()
        return
    assert '"pages/block_model.json"' in pyproject.read_text()


def test_the_model_is_read_on_the_first_page_extracted_not_on_import():
    """(The plugin's own import loads none of this: tests/test_plugin.py.)"""
    code = (
        "import sys\n"
        "from pi_web_tools.pages import extraction\n"
        "print('pi_web_tools.pages.block_model' in sys.modules)\n"
        "extraction.extract('<html><body><p>' + 'Words of a page. ' * 50 + '</p></body></html>')\n"
        "from pi_web_tools.pages import block_model\n"
        "print(list(block_model._loaded.values())[0] is not None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]
