"""One ONNX model: its ONNX Runtime session, tensor metadata, warm-up and the call that runs it."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from server.datatypes import ONNX_TO_V2, V2_TO_NUMPY
from server.errors import InferenceFailed, InvalidInput
from server.providers import CUDA
from server.stats import ModelStats

logger = logging.getLogger("server.model")

PLATFORM = "onnxruntime_onnx"


@dataclass(frozen=True)
class TensorSpec:
    """A graph input or output as the protocol describes it: ``-1`` marks a dynamic dimension."""

    name: str
    datatype: str
    shape: tuple[int, ...]
    dtype: np.dtype
    symbols: tuple[str | None, ...] = ()  # the graph's name of each dynamic dimension ("batch"), if any

    def metadata(self) -> dict[str, object]:
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


@dataclass(frozen=True)
class ModelSignature:
    """What decoding a request needs to know of a model: picklable, for the decode helper process."""

    name: str
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    input_by_name: dict[str, TensorSpec]
    output_by_name: dict[str, TensorSpec]
    output_names: list[str]
    shared_dims: list[tuple[str, list[tuple[str, int]]]]
    has_strings: bool


@dataclass(frozen=True)
class SessionSettings:
    """How every session of this server is built."""

    providers: list[str | tuple[str, dict[str, str]]]
    intra_op_threads: int = 1
    inter_op_threads: int = 1
    warmup: bool = True


def _spec(arg: object) -> TensorSpec | None:
    datatype = ONNX_TO_V2.get(arg.type)  # type: ignore[attr-defined]
    if datatype is None:
        return None  # sequences / maps (e.g. a ZipMap output): not expressible as a V2 tensor
    raw = arg.shape or []  # type: ignore[attr-defined]
    dims = tuple(d if isinstance(d, int) and d >= 0 else -1 for d in raw)
    symbols = tuple(d if isinstance(d, str) and d else None for d in raw)
    return TensorSpec(arg.name, datatype, dims, V2_TO_NUMPY[datatype], symbols)  # type: ignore[attr-defined]


def shared_dimensions(inputs: list[TensorSpec]) -> list[tuple[str, list[tuple[str, int]]]]:
    """Named dynamic dimensions that several inputs share: every request must give them one size."""
    places: dict[str, list[tuple[str, int]]] = {}
    for spec in inputs:
        for axis, symbol in enumerate(spec.symbols):
            if symbol is not None:
                places.setdefault(symbol, []).append((spec.name, axis))
    return [(symbol, where) for symbol, where in sorted(places.items()) if len(where) > 1]


class OnnxModel:
    """An ONNX model file served under ``name``; ``ready`` turns true only after load and warm-up."""

    def __init__(self, name: str, path: Path, version: str, settings: SessionSettings) -> None:
        self.name = name
        self.path = path
        self.version = version
        self.settings = settings
        self.ready = False
        self.inputs: list[TensorSpec] = []
        self.outputs: list[TensorSpec] = []
        self.input_by_name: dict[str, TensorSpec] = {}
        self.output_by_name: dict[str, TensorSpec] = {}
        self.output_names: list[str] = []
        self.providers: list[str] = []
        self._session = None
        self._bind_device: str | None = None
        self._metadata: dict[str, object] | None = None
        self.shared_dims: list[tuple[str, list[tuple[str, int]]]] = []
        self.signature: ModelSignature | None = None
        self.stats = ModelStats()
        self.warmup_ms: float | None = None
        # Running cost estimate in µs per input element (EWMA); None until the model has run once.
        self.us_per_element: float | None = None

    # --- loading --------------------------------------------------------------------------------
    def load(self) -> None:
        """Build the session (blocking), read its tensors, warm it up and mark the model ready."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.settings.intra_op_threads
        options.inter_op_num_threads = self.settings.inter_op_threads
        options.log_severity_level = 3  # errors only: no per-node placement warnings
        session = ort.InferenceSession(str(self.path), sess_options=options, providers=self.settings.providers)
        self._session = session
        self.providers = session.get_providers()
        self.inputs = [s for s in map(_spec, session.get_inputs()) if s is not None]
        if len(self.inputs) != len(session.get_inputs()):
            raise ValueError(f"model {self.name}: {self.path} has an input that is not a tensor")
        self.outputs = [s for s in map(_spec, session.get_outputs()) if s is not None]
        skipped = [o.name for o in session.get_outputs() if o.name not in {s.name for s in self.outputs}]
        if skipped:
            logger.warning("model %s: outputs %s are not tensors and are not served", self.name, skipped)
        if not self.outputs:
            raise ValueError(f"model {self.name}: {self.path} has no tensor output")
        self.input_by_name = {s.name: s for s in self.inputs}
        self.shared_dims = shared_dimensions(self.inputs)
        self.output_by_name = {s.name: s for s in self.outputs}
        self.output_names = [s.name for s in self.outputs]
        has_strings = any(s.datatype == "BYTES" for s in self.inputs + self.outputs)
        self.signature = ModelSignature(
            self.name,
            self.inputs,
            self.outputs,
            self.input_by_name,
            self.output_by_name,
            self.output_names,
            self.shared_dims,
            has_strings,
        )
        # I/O binding keeps CUDA outputs in device buffers ORT owns until one copy back; string
        # tensors live on the CPU only, so those models use the plain call.
        self._bind_device = "cuda" if self.providers[0] == CUDA and not has_strings else None
        self._metadata = {
            "name": self.name,
            "versions": [self.version],
            "platform": PLATFORM,
            "inputs": [s.metadata() for s in self.inputs],
            "outputs": [s.metadata() for s in self.outputs],
        }
        if self.settings.warmup:
            self._warm_up()
        self.stats = ModelStats()  # warm-up runs are not inferences
        self.ready = True

    def _warm_up(self) -> None:
        feeds = {}
        for spec in self.inputs:
            shape = tuple(1 if d < 0 else d for d in spec.shape)
            if spec.datatype == "BYTES":
                feeds[spec.name] = np.full(shape, "", dtype=object)
            else:
                feeds[spec.name] = np.zeros(shape, dtype=spec.dtype)
        started = time.perf_counter()
        try:
            self.run(feeds, self.output_names)
            first = time.perf_counter() - started
            self.us_per_element = None  # the first run pays one-off allocations: estimate from the second
            self.run(feeds, self.output_names)
        except InferenceFailed as exc:  # a model may reject all-zero input; serving still works
            logger.warning("model %s: warm-up run failed: %s", self.name, exc)
            return
        self.warmup_ms = first * 1e3

    def estimate_us(self, feeds: dict[str, np.ndarray]) -> float:
        """Predicted run time of ``feeds`` in µs (infinite before the first run)."""
        per_element = self.us_per_element
        if per_element is None:
            return float("inf")
        return per_element * sum(a.size for a in feeds.values())

    def unload(self) -> None:
        """Stop taking new requests. The session lives on while in-flight requests hold this instance."""
        self.ready = False

    def summary(self) -> str:
        """The startup line: where it came from, its tensors, device and warm-up."""

        def tensors(specs: list[TensorSpec]) -> str:
            return " ".join(f"{s.name}:{s.datatype}{list(s.shape)}".replace(" ", "") for s in specs)

        warm = f", warm-up {self.warmup_ms:.1f} ms" if self.warmup_ms is not None else ""
        return (
            f"version {self.version} READY on {self.providers[0] if self.providers else '?'}; "
            f"inputs {tensors(self.inputs)}; outputs {tensors(self.outputs)}{warm}"
        )

    # --- serving --------------------------------------------------------------------------------
    def metadata(self) -> dict[str, object]:
        assert self._metadata is not None
        return self._metadata

    def run(self, feeds: dict[str, np.ndarray], output_names: list[str]) -> list[np.ndarray]:
        """Run the session (blocking; call it off the event loop). Failures become InferenceFailed."""
        session = self._session
        if session is None:
            raise InferenceFailed(f"model {self.name} is unloaded")
        started = time.perf_counter()
        try:
            if self._bind_device is None:
                results = session.run(output_names, feeds)
            else:
                binding = session.io_binding()
                for name, array in feeds.items():
                    binding.bind_cpu_input(name, np.ascontiguousarray(array))
                for name in output_names:
                    binding.bind_output(name, self._bind_device)
                session.run_with_iobinding(binding)
                results = binding.copy_outputs_to_cpu()
        except Exception as exc:
            if type(exc).__name__ == "InvalidArgument":  # ORT's input checks: the request's fault
                raise InvalidInput(f"model {self.name} rejected the input: {' '.join(str(exc).split())}") from exc
            raise InferenceFailed(f"inference failed for model {self.name}: {exc}") from exc
        self.stats.execution_count += 1
        elements = sum(a.size for a in feeds.values()) or 1
        sample = (time.perf_counter() - started) * 1e6 / elements
        previous = self.us_per_element
        self.us_per_element = sample if previous is None else 0.8 * previous + 0.2 * sample
        return results
