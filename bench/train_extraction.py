"""Train the block model of web_fetch's extraction on the WCXB development split, with
cross-validation grouped by site, and write the shipped model.

    pip install -e '.[train]'        # lightgbm and numpy: never runtime dependencies
    nice -n 10 python bench/train_extraction.py --cache DIR --selector
    nice -n 10 python bench/train_extraction.py --cache DIR --ablate page-type   # a rule off
    python bench/train_extraction.py --fixture     # only the small test fixture (no data needed)

The folds are a hash of each page's registered domain (:func:`site_fold`), not scikit-learn's
GroupKFold, so ``bench/extract.py`` finds a page's fold without any training library.

Steps (every intermediate result is cached per page in ``--cache``, keyed by the code's feature
version, so a second run only trains):

1. Each page of ``../shared/data/wcxb-dev`` goes through the extractor's rules
   (``extraction._extract`` with a trace: the parsed tree, the rules' text, resiliparse's
   text, the page facts), then through :mod:`pi_web_tools.pages.blocks`: its blocks, their
   features, and a label per block from the ground truth (the block's words are main content
   when at least half of them align with the ground truth's text).
2. Folds by site (:func:`site_fold`: a hash of the registered domain, so no site and no sibling
   subdomain is on both sides). For each fold, a LightGBM model is trained on the other folds'
   blocks and scores the fold's blocks: every number printed comes from pages the model was not
   trained on. The filter (drop the rules' lines whose blocks score below the threshold) is
   scored per page with WCXB's word F1, per page type, beside the rules alone, trafilatura's
   and resiliparse's defaults on the same pages.
3. The model trained on every page is written to ``plugin/pages/block_model.json`` (and each
   fold's model to ``DIR/folds/``, where ``bench/extract.py`` reads the dev split's pages
   with the fold that did not see their site).

Seeded: the same data and code give the same folds, the same model and the same numbers.
"""

from __future__ import annotations

import argparse
import math
import gzip
import hashlib
import json
import os
import pickle
import sys
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "wcxb-dev"
MODEL_OUT = ROOT / "plugin" / "pages" / "block_model.json"
FIXTURE_OUT = ROOT / "tests" / "pages" / "fixtures" / "tiny_model.json"
TYPES = ("article", "documentation", "service", "forum", "collection", "listing", "product")
FOLDS = 5
SEED = 20260
#: Bump when the cached per-page data would differ (features, labels, rules).
CACHE_VERSION = "3"
CREDIT = (
    "Trained on the WCXB development split (Web Content eXtraction Benchmark, 2026, "
    "Murrough Foley), licensed CC-BY-4.0: https://creativecommons.org/licenses/by/4.0/"
)
PARAMS = {
    "objective": "binary",
    "learning_rate": 0.08,
    "num_leaves": 31,
    "min_data_in_leaf": 40,
    "feature_fraction": 0.7,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "max_bin": 63,
    "verbose": -1,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
}
ROUNDS = 150
_WORDS = None


def tokens(text: str) -> list[str]:
    """Words as WCXB's evaluate.py counts them."""
    global _WORDS
    if _WORDS is None:
        import re

        _WORDS = re.compile(r"\w+")
    return _WORDS.findall((text or "").lower())


def word_f1(predicted: Counter, reference: Counter) -> float:
    """WCXB's word F1 of two token multisets (empty reference: 1 when nothing predicted)."""
    p_total, r_total = sum(predicted.values()), sum(reference.values())
    if not r_total:
        return 1.0 if not p_total else 0.0
    if not p_total:
        return 0.0
    overlap = sum((predicted & reference).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / p_total, overlap / r_total
    return 2 * precision * recall / (precision + recall)


_SECOND_LEVEL = {"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "go"}


def site(url: str | None) -> str:
    """The registered domain of *url*, roughly (``docs.python.org`` -> ``python.org``,
    ``www.bbc.co.uk`` -> ``bbc.co.uk``)."""
    host = (urlsplit(url or "").hostname or "").lower().rstrip(".")
    labels = host.split(".")
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def site_fold(url: str | None, folds: int = FOLDS) -> int:
    """The cross-validation fold of a page, by its site (the same in bench/extract.py)."""
    return hashlib.sha256(site(url).encode()).digest()[0] % folds


def load_pages(data: Path) -> list[dict]:
    """Every page of the split: id, URL, type, fold, HTML path, ground truth text."""
    pages = []
    for path in sorted((data / "ground-truth").glob("*.json")):
        record = json.loads(path.read_text())
        kind = ((record.get("_internal") or {}).get("page_type") or {}).get("primary", "article")
        kind = "collection" if kind == "category" else kind
        truth = (record.get("ground_truth") or {}).get("main_content") or ""
        url = record.get("url") or f"http://bench.invalid/wcxb/{path.stem}"
        pages.append(
            {
                "id": path.stem,
                "url": url,
                "type": kind,
                "fold": site_fold(url),
                "file": str(data / "html" / f"{path.stem}.html.gz"),
                "truth": truth,
            }
        )
    return pages


def default_cache() -> Path:
    """Where the per-page data and the fold models go (``PI_WEB_TOOLS_TRAIN_CACHE``, else the
    user's cache folder)."""
    named = os.environ.get("PI_WEB_TOOLS_TRAIN_CACHE")
    if named:
        return Path(named)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / (
        "pi-web-tools/train-extraction"
    )


# --------------------------------------------------------------------------- per-page data
#: Rules of extraction.py that --ablate switches off, to test whether each still earns its
#: place under the learned stage (each is a change to the module's own tables).
ABLATIONS = ("posts", "page-type", "comments")


def ablate(names: str) -> None:
    """Switch off rules of the extractor in this process (names joined by commas)."""
    for name in filter(None, names.split(",")):
        _ablate_one(name)


def _ablate_one(name: str) -> None:
    from pi_web_tools.pages import extraction

    if name == "posts":
        extraction._marked_posts = lambda tree: None
        extraction._forum_posts = lambda tree, text, rule: None
    elif name == "page-type":  # every page read as a marked-up article: trafilatura alone
        extraction.classify = lambda tree, url, sig=None: "article"
        extraction._profile = lambda page_type, sig, url: "article"
    elif name == "comments":  # no comments kept, whatever the profile
        import trafilatura

        bare = trafilatura.bare_extraction

        def no_comments(*args, **kwargs):
            kwargs["include_comments"] = False
            return bare(*args, **kwargs)

        trafilatura.bare_extraction = no_comments
    elif name:
        raise ValueError(f"unknown ablation {name!r}")


def prepare(page: dict, cache: Path, ablation: str = "") -> dict:
    """The page's blocks, features, labels and the rules' text in units (cached)."""
    out = cache / f"v{CACHE_VERSION}{'-' + ablation if ablation else ''}" / f"{page['id']}.pkl"
    if out.exists():
        with open(out, "rb") as handle:
            return pickle.load(handle)
    import trafilatura
    from pi_web_tools.pages import block_filter, blocks, extraction

    ablate(ablation)

    html = gzip.open(page["file"]).read().decode("utf-8", "replace")
    trace: dict = {}
    started = time.perf_counter()
    extraction._extract(html, page["url"], trace)
    rules_seconds = time.perf_counter() - started
    try:
        theirs = trafilatura.extract(html, url=page["url"]) or ""
    except Exception:  # noqa: BLE001 - a baseline failure scores as empty
        theirs = ""
    try:
        from resiliparse.extract.html2text import extract_plain_text

        resili_default = extract_plain_text(html, main_content=True) or ""
    except Exception:  # noqa: BLE001
        resili_default = ""
    record = {
        "id": page["id"],
        "type": page["type"],
        "fold": page["fold"],
        "url": page["url"],
        "truth": Counter(tokens(page["truth"])),
        "trafilatura": Counter(tokens(theirs)),
        "resiliparse_default": Counter(tokens(resili_default)),
        "rules": Counter(),
        "rules_seconds": rules_seconds,
        "X": [],
        "y": [],
        "cover": [],
        "words": [],
        "units": [],
    }
    tree = trace.get("tree")
    if tree is None:  # unparsable: the rules' result only
        with open(out, "wb") as handle:
            pickle.dump(record, handle)
        return record
    text = trace["rules_text"]
    record["rules"] = Counter(tokens(text))
    seg = blocks.segment(tree)
    if seg.blocks:
        spans = blocks.align(seg, text)
        resili = trace["resiliparse"] or ""
        kept = {
            "ours": blocks.coverage(seg, spans),
            "resiliparse": blocks.coverage(seg, blocks.align(seg, resili)),
        }
        truth_cover = blocks.coverage(seg, blocks.align(seg, page["truth"]))
        record["X"] = blocks.features(seg, kept, trace["facts"])
        record["cover"] = truth_cover
        record["y"] = [1 if c >= 0.5 else 0 for c in truth_cover]
        record["words"] = [b.words for b in seg.blocks]
        record["page_words"] = seg.words
        record["spans"] = [(b.start, b.end) for b in seg.blocks]
        record["tags"] = [b.element.tag for b in seg.blocks]
        record["kept"] = kept["ours"]
        lines = text.split("\n")
        for unit in block_filter.units(text):
            unit_tokens = Counter(tokens("\n".join(lines[unit.first : unit.last + 1])))
            placed = Counter()
            for line in range(unit.first, unit.last + 1):
                for start, end in spans[line]:
                    for pos in range(start, end):
                        placed[seg.block_of[pos]] += 1
            record["units"].append((unit_tokens, dict(placed)))
        # the rules' words outside any unit (none expected; kept so scores stay exact)
        unit_total = sum((u[0] for u in record["units"]), Counter())
        record["outside"] = record["rules"] - unit_total
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as handle:
        pickle.dump(record, handle)
    return record


def _prepare_one(args):
    page, cache, ablation = args
    try:
        return prepare(page, cache, ablation)
    except Exception as exc:  # noqa: BLE001 - reported, the page is left out
        return {"id": page["id"], "error": f"{type(exc).__name__}: {exc}"}


# --------------------------------------------------------------------------- training
def train(records: list[dict], rounds: int = ROUNDS, params: dict | None = None):
    """A LightGBM booster on the blocks of *records* (each block weighted by its words, each
    page's weights summing to the same total, so long pages do not outvote short ones)."""
    import lightgbm as lgb
    import numpy as np

    X, y, w = [], [], []
    for r in records:
        if not r.get("X"):
            continue
        total = sum(r["words"]) or 1
        X.extend(r["X"])
        y.extend(r["y"])
        w.extend(100.0 * words / total for words in r["words"])
    from pi_web_tools.pages.blocks import FEATURE_NAMES

    data = lgb.Dataset(np.asarray(X, dtype=np.float64), label=np.asarray(y), weight=np.asarray(w),
                       feature_name=list(FEATURE_NAMES), free_raw_data=True)
    return lgb.train({**PARAMS, **(params or {}), "seed": SEED}, data, num_boost_round=rounds)


def strip_dump(dump: dict) -> dict:
    """A ``dump_model()`` without what prediction does not read (gains, counts, values of
    internal nodes), floats as LightGBM wrote them."""
    drop = {"split_gain", "internal_value", "internal_weight", "internal_count", "leaf_weight",
            "leaf_count", "split_index", "leaf_index"}

    def clean(node):
        if isinstance(node, dict):
            return {k: clean(v) for k, v in node.items() if k not in drop}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    keep = ("name", "version", "num_class", "num_tree_per_iteration", "label_index",
            "max_feature_idx", "objective", "average_output", "feature_names", "tree_info")
    out = {k: dump[k] for k in keep if k in dump}
    out["tree_info"] = [
        {"tree_index": t["tree_index"], "tree_structure": clean(t["tree_structure"])}
        for t in dump["tree_info"]
    ]
    return out


def write_model(booster, path: Path, meta: dict) -> int:
    """Write *booster* as the shipped JSON (compact); its size in bytes."""
    dump = strip_dump(booster.dump_model())
    dump["pi_web_tools"] = meta
    text = json.dumps(dump, separators=(",", ":"), allow_nan=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return len(text) + 1


# --------------------------------------------------------------------------- scoring
def gated(record: dict) -> list[int]:
    """The blocks the run-time gate scores (``block_filter.scored_blocks``), from the cached
    coverage of each block by the rules' text and by resiliparse's."""
    from pi_web_tools.pages.block_filter import GATE_WORDS
    from pi_web_tools.pages.blocks import FEATURE_NAMES

    if "gated" not in record:
        column = FEATURE_NAMES.index("resiliparse_kept")
        record["gated"] = [
            i for i, words in enumerate(record["words"])
            if record["kept"][i] > 0 or record["X"][i][column] > 0 or words > GATE_WORDS
        ]
    return record["gated"]


def add_for(record: dict, add: float | None, add_article: float | None) -> float | None:
    """The add threshold of a page: *add_article* on a page with article markup."""
    from pi_web_tools.pages.blocks import FEATURE_NAMES

    if add is None or add_article is None or not record.get("X"):
        return add
    marked = record["X"][0][FEATURE_NAMES.index("has_article_markup")]
    return add_article if marked else add


def model_tokens(record: dict, scores, threshold: float | None, add: float | None) -> Counter:
    """The rules' tokens after the learned stage, given each block's score: units scoring below
    *threshold* dropped (``None``: none dropped), blocks the rules missed scoring at least
    *add* added (``None``: none added); the rules' tokens when nothing would be left (as
    ``block_filter.filter_text`` does)."""
    if not record.get("units"):
        return record["rules"]
    kept = Counter(record.get("outside") or {})
    for unit_tokens, placed in record["units"]:
        count = sum(placed.values())
        if count and threshold is not None:
            score = sum(scores[b] * c for b, c in placed.items()) / count
            if score < threshold:
                continue
        kept.update(unit_tokens)
    if add is not None:
        words = record["page_words"]
        for i in gated(record):  # blocks the run-time gate does not score are never added
            if scores[i] >= add and record["kept"][i] == 0:
                start, end = record["spans"][i]
                kept.update(words[start:end])
    return kept if kept else record["rules"]


def table(rows: dict[str, dict[str, float]], counts: dict[str, int], title: str) -> str:
    """A per-type table: one column per system."""
    systems = list(rows)
    widths = [max(14, len(s) + 2) for s in systems]
    lines = [title, f"{'type':15}{'pages':>6}"
             + "".join(f"{s:>{w}}" for s, w in zip(systems, widths))]
    for kind in (*TYPES, "overall"):
        lines.append(
            f"{kind:15}{counts.get(kind, 0):>6}"
            + "".join(f"{rows[s].get(kind, 0.0):{w}.4f}" for s, w in zip(systems, widths))
        )
    return "\n".join(lines)


def per_type(f1s: dict[str, float], records: list[dict]) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    for r in records:
        by.setdefault(r["type"], []).append(f1s[r["id"]])
    out = {k: sum(v) / len(v) for k, v in by.items()}
    out["overall"] = sum(f1s.values()) / len(f1s)
    return out


def cross_validate(records: list[dict], folds: int, cache: Path, rounds: int):
    """Out-of-fold block scores of every page, and each fold's model written to the cache."""
    oof: dict[str, list[float]] = {}
    for k in range(folds):
        started = time.perf_counter()
        train_set = [r for r in records if r["fold"] != k]
        booster = train(train_set, rounds)
        write_model(booster, cache / f"fold-{k}.json",
                    {"fold": k, "folds": folds, "credit": CREDIT})
        for r in records:
            if r["fold"] == k and r.get("X"):
                import numpy as np

                oof[r["id"]] = list(booster.predict(np.asarray(r["X"], dtype=np.float64)))
        print(f"  fold {k}: trained on {len(train_set)} pages in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
    return oof


def report(records: list[dict], oof: dict, threshold: float, add: float,
           add_article: float) -> dict:
    """Per-type word F1 of the rules, the baselines and the learned stage's parts, out of
    fold; printed, and returned as ``{system: {type: F1}}``."""
    counts = Counter(r["type"] for r in records)
    counts["overall"] = len(records)

    def learned(t, a, a_article=add_article):
        return {
            r["id"]: word_f1(
                model_tokens(r, oof[r["id"]], t, add_for(r, a, a_article))
                if r["id"] in oof else r["rules"],
                r["truth"],
            )
            for r in records
        }

    f1 = {
        "rules": {r["id"]: word_f1(r["rules"], r["truth"]) for r in records},
        "trafilatura": {r["id"]: word_f1(r["trafilatura"], r["truth"]) for r in records},
        "resiliparse": {r["id"]: word_f1(r["resiliparse_default"], r["truth"]) for r in records},
        "drop only": learned(threshold, None),
        "add only": learned(None, add),
        "drop+add": learned(threshold, add),
        "add: one threshold": learned(threshold, add, None),
    }
    systems = {name: per_type(values, records) for name, values in f1.items()}
    print(table(systems, counts, f"word F1 per page type, out of fold (site-grouped CV; drop "
                                 f"below {threshold}, add from {add}, from {add_article} on "
                                 "pages with article markup)"))
    near = {}
    for t, a in ((threshold - 0.1, add), (threshold + 0.1, add), (threshold, add - 0.1),
                 (threshold, add + 0.1)):
        near[f"{t:.2f}/{a:.2f}"] = per_type(
            learned(round(t, 2), round(a, 2), round(add_article + a - add, 2)), records
        )
    print(table(near, counts, "the same, with thresholds moved by 0.1 (drop/add)"))
    systems["_pages"] = f1
    return systems


def selector_experiment(records: list[dict], oof: dict, threshold: float, add: float,
                        add_article: float, folds: int):
    """Stacking: per page, regress each candidate's F1 (the rules' text; drop+add; the model's
    blocks alone) from page features, take the best; folds by site as above. Printed beside
    drop+add; kept in the product only if it wins on every type (it did not: docs)."""
    import lightgbm as lgb
    import numpy as np
    from pi_web_tools.pages import blocks

    page_columns = list(range(len(blocks.FEATURE_NAMES) - 15, len(blocks.FEATURE_NAMES)))
    feats, gains = {}, {}
    for r in records:
        if r["id"] not in oof or not r.get("units"):
            continue
        scores = np.asarray(oof[r["id"]])
        words = np.asarray(r["words"], dtype=float)
        alone = Counter()
        for i in np.flatnonzero(scores >= threshold):
            start, end = r["spans"][i]
            alone.update(r["page_words"][start:end])
        cands = [r["rules"], model_tokens(r, scores, threshold, add_for(r, add, add_article)), alone]
        sizes = [sum(c.values()) for c in cands]
        gains[r["id"]] = [word_f1(c, r["truth"]) for c in cands]
        feats[r["id"]] = [r["X"][0][c] for c in page_columns] + [
            math.log1p(x) for x in sizes
        ] + [sizes[1] / max(1, sizes[0]), sizes[2] / max(1, sizes[0]),
             float((scores * words).sum() / words.sum()), float(scores.mean()), len(r["units"])]
    chosen = {}
    fold_of = {r["id"]: r["fold"] for r in records}
    for k in range(folds):
        train_ids = [i for i in feats if fold_of[i] != k]
        test_ids = [i for i in feats if fold_of[i] == k]
        if not test_ids:
            continue
        predicted = []
        for c in (0, 2):  # each candidate's gain over drop+add
            booster = lgb.train(
                {"objective": "regression", "num_leaves": 7, "learning_rate": 0.05,
                 "min_data_in_leaf": 30, "verbose": -1, "seed": SEED, "deterministic": True,
                 "num_threads": 1},
                lgb.Dataset(np.asarray([feats[i] for i in train_ids]),
                            label=np.asarray([gains[i][c] - gains[i][1] for i in train_ids])),
                200,
            )
            predicted.append(booster.predict(np.asarray([feats[i] for i in test_ids])))
        for j, i in enumerate(test_ids):
            options = [predicted[0][j], 0.0, predicted[1][j]]
            chosen[i] = int(np.argmax(options))
    f1 = {
        r["id"]: gains[r["id"]][chosen[r["id"]]] if r["id"] in chosen
        else word_f1(r["rules"], r["truth"])
        for r in records
    }
    return per_type(f1, records), Counter(chosen.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--folds", type=int, default=FOLDS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--threshold", type=float, default=0.35, help="drop below this score")
    parser.add_argument("--add", type=float, default=0.4, help="add blocks from this score")
    parser.add_argument("--add-article", type=float, default=0.6,
                        help="add blocks from this score on pages with article markup")
    parser.add_argument("--selector", action="store_true", help="also try the stacked selector")
    parser.add_argument("--ablate", default="",
                        help="switch rules of the extractor off, comma-separated, from: "
                        + ", ".join(ABLATIONS) + " (implies --no-final)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N pages (a trial)")
    parser.add_argument("--no-final", action="store_true", help="do not write the shipped model")
    parser.add_argument("--fixture", action="store_true", help="only write the test fixture")
    options = parser.parse_args(argv)
    unknown = set(filter(None, options.ablate.split(","))) - set(ABLATIONS)
    if unknown:
        parser.error(f"unknown --ablate {', '.join(sorted(unknown))}")
    if options.fixture:
        write_fixture(FIXTURE_OUT)
        return 0
    if not (options.data / "ground-truth").is_dir():
        print(f"train_extraction.py: no WCXB dev split in {options.data} (see --data)",
              file=sys.stderr)
        return 2
    pages = load_pages(options.data)
    if options.limit:
        pages = pages[: options.limit]
    started = time.perf_counter()
    with Pool(options.jobs, maxtasksperchild=50) as pool:
        records = pool.map(
            _prepare_one, [(p, options.cache, options.ablate) for p in pages], chunksize=4
        )
    failed = [r for r in records if "error" in r]
    for r in failed:
        print(f"  left out {r['id']}: {r['error']}")
    records = [r for r in records if "error" not in r]
    print(f"{len(records)} pages prepared in {time.perf_counter() - started:.0f} s "
          f"({sum(len(r['X']) for r in records)} blocks)", flush=True)
    if options.ablate:
        options.no_final = True
    models = options.cache / ("folds" if not options.ablate else f"folds-{options.ablate}")
    oof = cross_validate(records, options.folds, models, options.rounds)
    systems = report(records, oof, options.threshold, options.add, options.add_article)
    if options.selector:
        scores, chosen = selector_experiment(records, oof, options.threshold, options.add,
                                             options.add_article, options.folds)
        counts = Counter(r["type"] for r in records)
        counts["overall"] = len(records)
        print(table({"drop+add": systems["drop+add"], "selector": scores}, counts,
                    f"the stacked selector (chose rules/drop+add/blocks: {chosen[0]}/"
                    f"{chosen[1]}/{chosen[2]} pages)"))
    if not options.no_final:
        booster = train(records, options.rounds)
        meta = {
            "threshold": options.threshold,
            "add_threshold": options.add,
            "add_threshold_article": options.add_article,
            "credit": CREDIT,
            "trained_on": f"{len(records)} pages of the WCXB development split",
            "cv_f1": {k: round(v, 4) for k, v in systems["drop+add"].items()},
            "cv_rules_f1": {k: round(v, 4) for k, v in systems["rules"].items()},
            "seed": SEED,
            "rounds": options.rounds,
        }
        size = write_model(booster, MODEL_OUT, meta)
        print(f"wrote {MODEL_OUT.relative_to(ROOT)} ({size / 1024:.0f} KiB)")
    return 0


# --------------------------------------------------------------------------- test fixture
def write_fixture(path: Path) -> None:
    """A tiny model with numerical splits on values with NaN, zeros and a categorical feature,
    and LightGBM's own predictions on rows that reach every kind of branch: the test checks the
    pure-Python walk gives the same numbers."""
    import lightgbm as lgb
    import numpy as np

    rng = np.random.default_rng(SEED)
    n = 600
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 6, size=n)  # a categorical feature
    X[rng.random(n) < 0.15, 0] = np.nan  # missing values: NaN-missing splits
    X[rng.random(n) < 0.3, 1] = 0.0  # many zeros
    y = ((np.nan_to_num(X[:, 0]) + X[:, 1] > 0.2) ^ (X[:, 3] % 2 == 0)).astype(int)
    data = lgb.Dataset(X, label=y, categorical_feature=[3], feature_name=["a", "b", "c", "cat"])
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1,
              "seed": SEED, "deterministic": True, "num_threads": 1, "min_data_per_group": 5,
              "cat_smooth": 1.0}
    booster = lgb.train(params, data, num_boost_round=12)
    rows = X[:40].copy()
    rows[0, :] = [np.nan, 0.0, 0.0, 1]
    rows[1, :] = [0.0, np.nan, -0.0, 7]  # an unseen category
    rows[2, :] = [1e-40, -1e-40, 5.0, -1]  # tiny values, a negative category
    dump = strip_dump(booster.dump_model())
    dump["pi_web_tools"] = {"fixture": True}
    dump["expected"] = {
        "rows": [[None if np.isnan(v) else float(v) for v in row] for row in rows],
        "raw": [float(v) for v in booster.predict(rows, raw_score=True)],
        "probability": [float(v) for v in booster.predict(rows)],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dump, separators=(",", ":")) + "\n")
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    sys.exit(main())
