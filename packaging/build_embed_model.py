"""Build step (no network): derive the faster int8-compute embedding model from the installed model package.

    python packaging/build_embed_model.py [--force]

The model package ships all-MiniLM-L6-v2 with int8-*stored* weights that onnxruntime turns back into float32
at load time, so every matrix product runs in float32. This writes plur_desk/resources/minilm-l6-q8.onnx (ignored
by git, bundled by PyInstaller) where the attention and first feed-forward products run in int8
(DynamicQuantizeMatMul, per-output-channel weight scales); the feed-forward down-projections stay float32 because
quantizing their inputs costs the most accuracy. The attention's NaN guard (`Where(IsNaN(softmax), 0, softmax)`)
is dropped: the exported mask fills with the finite float32 minimum, so no softmax row is ever NaN (checked below).

The result is checked before it is written: cosine against the package's model on the demo store's statements
must be >= MIN_COSINE for every statement, else nothing is written and the app keeps using the package's model.
A sidecar JSON records the source model's sha256; plur_desk uses the derived model only when it matches the
installed package (plur_desk.index.embeddings.Embedder.model_file). Needs the `onnx` package (embeddings extra).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RECIPE = 1
MIN_COSINE = 0.99


def _fold_constants(source: Path, out: Path) -> None:
    """onnxruntime's basic optimisations, saved: the int8 weights become float32 initialisers quantize_dynamic sees."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(out)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def _drop_nan_guard(path: Path) -> int:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    for node in graph.node:  # the mask fill must be finite, or a fully masked row would give NaN
        condition = producer.get(node.input[0]) if node.op_type == "Where" else None
        if condition is not None and condition.op_type != "IsNaN":
            fills = [constants[x] for x in node.input[1:] if x in constants]
            if any(not np.all(np.isfinite(f)) for f in fills):
                return 0
    bypass: dict[str, str] = {}
    dropped = []
    for node in graph.node:
        guard = producer.get(node.input[0]) if node.op_type == "Where" else None
        if guard is not None and guard.op_type == "IsNaN" and guard.input[0] == node.input[2]:
            bypass[node.output[0]] = node.input[2]
            dropped += [node, guard]
    if any(o.name in bypass for o in graph.output):
        return 0
    for node in dropped:
        graph.node.remove(node)
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in bypass:
                node.input[i] = bypass[name]
    onnx.save(model, str(path))
    return len(dropped) // 2


def _quantize(folded: Path, out: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(folded))
    shapes = {t.name: tuple(t.dims) for t in model.graph.initializer}
    inner = max(dims[0] for dims in shapes.values() if len(dims) == 2 and dims[0] < 10000)  # the FFN width
    down = [n.name for n in model.graph.node if n.op_type == "MatMul" and shapes.get(n.input[1], (0,))[0] == inner]
    # onnxruntime logs "Please consider to run pre-processing before quantization" on every run: advice for image
    # models that reads like an error on a first start; the agreement check below is what vouches for the result.
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(
            str(folded),
            str(out),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=down,
        )
    finally:
        logging.disable(logging.NOTSET)


def _agreement(source: Path, derived: Path) -> float:
    from plur_desk.app.demo import demo_source
    from plur_desk.index.embeddings import Embedder
    from plur_desk.store.plur_store import PlurStore

    store = PlurStore(demo_source())
    store.load()
    texts = sorted({str(e.value["statement"]) for e in store.engrams.entries if isinstance(e.value, dict)})
    texts += ["deploy freezes on Friday", "Die Datenbank läuft auf Port 5432", "日本語のテスト", "café naïve über"]
    here, there = Embedder(source).embed(texts), Embedder(derived).embed(texts)
    return float(np.min(np.sum(here * there, axis=1)))


def build(source: Path, target: Path, force: bool = False) -> str:
    """Derive `target` (+ its .json sidecar) from `source`; returns what happened, in one line."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    sidecar = target.with_suffix(".json")
    want = {"source_sha256": digest, "recipe": RECIPE}
    if not force and target.is_file() and sidecar.is_file():
        recorded = json.loads(sidecar.read_text(encoding="utf-8"))
        if {key: recorded.get(key) for key in want} == want:
            return "up to date"
    try:
        import onnx  # noqa: F401
    except ImportError:
        return "the onnx package is missing; the package's (slower) model stays in use"
    with tempfile.TemporaryDirectory() as tmp:
        folded, quantized = Path(tmp) / "folded.onnx", Path(tmp) / "q8.onnx"
        _fold_constants(source, folded)
        guards = _drop_nan_guard(folded)
        _quantize(folded, quantized)
        cosine = _agreement(source, quantized)
        if cosine < MIN_COSINE:
            return f"cosine {cosine:.4f} < {MIN_COSINE}: nothing written, the package's model stays in use"
        sidecar.unlink(missing_ok=True)  # no sidecar, no use: a half-written model is never picked up
        shutil.copyfile(quantized, target)
        record = {**want, "min_cosine_demo": round(cosine, 5), "nan_guards_dropped": guards}  # details kept here
        sidecar.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return f"prepared the faster embedding model ({target.name}; it agrees with the packaged one)"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    parser.add_argument("--target", type=Path, help="where to write the model (default: the one the app uses)")
    args = parser.parse_args()
    from plur_desk.index.embeddings import DERIVED_MODEL, Embedder

    source = Embedder.package_model_file()
    target = args.target or DERIVED_MODEL
    outcome = "the embedding model package is not installed" if source is None else build(source, target, args.force)
    print(f"embedding model: {outcome}")  # one progress line, like each of dev.sh's steps
    return 0


if __name__ == "__main__":
    sys.exit(main())
