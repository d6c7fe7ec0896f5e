"""Build step (no network): derive the faster int8-compute embedding model from the installed model package.

    python packaging/build_embed_model.py [--force]

The model package ships all-MiniLM-L6-v2 with int8-*stored* weights that onnxruntime turns back into float32
at load time, so every matrix product runs in float32. This writes plur_desk/resources/minilm-l6-q8.onnx (ignored
by git, bundled by PyInstaller) where every product with a weight matrix runs in int8 (per-output-channel weight
scales) and each *token's* input row is quantised with its own scale, computed at run time (`_per_row_scales`).
onnxruntime's own dynamic quantisation uses one scale for the whole batch, so a statement's vector moved with its
batch neighbours (cosine to itself run alone down to 0.966) and the app had to embed one statement at a time; with a
scale per row nothing crosses rows, batches are back, and the accuracy is better than with one scale for all
(which is why the feed-forward down-projections, float32 before, are int8 too). The GELU's six elementwise nodes
become one BiasGelu. The attention's NaN guard (`Where(IsNaN(softmax), 0, softmax)`) is dropped: the exported mask
fills with the finite float32 minimum, so no softmax row is ever NaN (checked below).

The result is checked before it is written: cosine against the package's model on the demo store's statements
must be >= MIN_COSINE for every statement, else nothing is written and the app keeps using the package's model.
A sidecar JSON records the source model's sha256 and the recipe; plur_desk uses the derived model only when both
match (plur_desk.index.embeddings.Embedder.model_file). Needs the `onnx` package (embeddings extra).
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

from plur_desk.index.embeddings import DERIVED_RECIPE as RECIPE  # noqa: E402

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
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # onnxruntime logs "Please consider to run pre-processing before quantization" on every run: advice for image
    # models that reads like an error on a first start; the agreement check below is what vouches for the result.
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(
            str(folded), str(out), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
        )
    finally:
        logging.disable(logging.NOTSET)


class _Graph:
    """The nodes of an ONNX graph with who makes and who reads each value, rebuilt in place by `rewrite`."""

    def __init__(self, path: Path) -> None:
        import onnx

        self.model = onnx.load(str(path))
        self.graph = self.model.graph
        self.nodes = list(self.graph.node)  # held, so each node keeps its one Python object (identity below)
        self.made_by = {out: node for node in self.nodes for out in node.output}
        self.read_by: dict[str, list] = {}
        for node in self.nodes:
            for name in node.input:
                self.read_by.setdefault(name, []).append(node)
        self.constants = {t.name for t in self.graph.initializer}
        self._dropped: set[int] = set()
        self._replaced: dict[int, list] = {}

    def only_reader(self, name: str, op_type: str):
        readers = self.read_by.get(name, [])
        if len(readers) != 1 or readers[0].op_type != op_type:
            raise ValueError(f"{name}: expected one {op_type} reading it, found {[r.op_type for r in readers]}")
        return readers[0]

    def replace(self, group: list, new_nodes: list) -> None:
        """`group`'s nodes go; `new_nodes` take the place of its first."""
        self._dropped.update(id(node) for node in group)
        self._replaced[id(group[0])] = new_nodes

    def save(self, path: Path) -> None:
        import onnx

        nodes = []
        for node in self.nodes:
            if id(node) in self._replaced:
                nodes.extend(self._replaced[id(node)])
            elif id(node) not in self._dropped:
                nodes.append(node)
        del self.graph.node[:]
        self.graph.node.extend(nodes)
        onnx.checker.check_model(self.model)
        onnx.save(self.model, str(path))


def _per_row_scales(path: Path) -> int:
    """Each DynamicQuantizeLinear (one uint8 scale and zero point for the whole batch) becomes a symmetric scale per
    row of its input, i.e. per token: max|x| / 127, zero point 128. Each MatMulInteger -> Cast -> Mul(scale x weight
    scales) becomes one MatMulIntegerToFloat taking that (batch, tokens, 1) scale. The bias stays a separate Add:
    onnxruntime 1.32's MatMulIntegerToFloat gives wrong results with a bias and a scale that is not a scalar, and its
    own fusion of the MatMulInteger pattern assumes a scalar scale (both seen as cosine < 0.9 to the package model,
    which the agreement check catches). Returns the number of quantised inputs rewritten."""
    from onnx import helper, numpy_helper

    g = _Graph(path)
    constants = {"row_inv127": np.float32(1 / 127), "row_tiny": np.float32(1e-12), "row_one": np.float32(1.0)}
    g.graph.initializer.extend(numpy_helper.from_array(np.array(v), k) for k, v in constants.items())
    g.graph.initializer.append(numpy_helper.from_array(np.array(128, dtype=np.uint8), "row_zero_point"))
    quantizers = [node for node in g.nodes if node.op_type == "DynamicQuantizeLinear"]
    for n, node in enumerate(quantizers):
        x, (q, scale, zero_point), p = node.input[0], node.output, f"row{n}_"
        g.replace(
            [node],
            [
                helper.make_node("Abs", [x], [p + "abs"]),
                helper.make_node("ReduceMax", [p + "abs"], [p + "max"], axes=[-1], keepdims=1),
                helper.make_node("Max", [p + "max", "row_tiny"], [p + "max_nonzero"]),
                helper.make_node("Mul", [p + "max_nonzero", "row_inv127"], [scale]),
                helper.make_node("Div", [x, scale], [p + "scaled"]),
                helper.make_node("QuantizeLinear", [p + "scaled", "row_one", "row_zero_point"], [q]),
                helper.make_node("Identity", ["row_zero_point"], [zero_point]),
            ],
        )
    for node in [node for node in g.nodes if node.op_type == "MatMulInteger"]:
        cast = g.only_reader(node.output[0], "Cast")
        mul = g.only_reader(cast.output[0], "Mul")
        scales = g.made_by[mul.input[1]]
        if scales.op_type != "Mul" or scales.input[0] not in {q.output[1] for q in quantizers}:
            raise ValueError(f"{node.name}: not the MatMulInteger pattern quantize_dynamic writes")
        row_scale, weight_scale = scales.input
        a, b, a_zero, b_zero = node.input
        fused = helper.make_node(
            "MatMulIntegerToFloat",
            [a, b, row_scale, weight_scale, a_zero, b_zero],
            list(mul.output),
            domain="com.microsoft",
            name=node.name + "_to_float",
        )
        g.replace([node, cast, mul, scales], [fused])
    g.save(path)
    return len(quantizers)


def _fuse_gelu(path: Path) -> int:
    """x * (0.5 * (erf(x / sqrt 2) + 1)) after the bias Add -> one BiasGelu (onnxruntime's own Gelu fusion does not
    match the exported operand order): six passes over the widest activations become one."""
    from onnx import helper

    g = _Graph(path)
    fused = 0
    for erf in [node for node in g.nodes if node.op_type == "Erf"]:
        div = g.made_by[erf.input[0]]
        x = div.input[0]
        add_one = g.only_reader(erf.output[0], "Add")
        half = g.only_reader(add_one.output[0], "Mul")
        final = g.only_reader(half.output[0], "Mul")
        bias = g.made_by.get(x)
        if div.op_type != "Div" or set(final.input) != {x, half.output[0]} or len(g.read_by[x]) != 2:
            raise ValueError(f"{erf.name}: not the exported GELU pattern")
        if bias is None or bias.op_type != "Add" or bias.input[1] not in g.constants:
            raise ValueError(f"{erf.name}: no bias Add before the GELU")
        gelu = helper.make_node("BiasGelu", list(bias.input), list(final.output), domain="com.microsoft")
        g.replace([bias, div, erf, add_one, half, final], [gelu])
        fused += 1
    g.save(path)
    return fused


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
        rows = _per_row_scales(quantized)
        gelus = _fuse_gelu(quantized)
        cosine = _agreement(source, quantized)
        if cosine < MIN_COSINE:
            return f"cosine {cosine:.4f} < {MIN_COSINE}: nothing written, the package's model stays in use"
        sidecar.unlink(missing_ok=True)  # no sidecar, no use: a half-written model is never picked up
        shutil.copyfile(quantized, target)
        record = {
            **want,
            "min_cosine_demo": round(cosine, 5),
            "nan_guards_dropped": guards,
            "per_row_quantized_inputs": rows,
            "gelus_fused": gelus,
        }  # details kept here
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
