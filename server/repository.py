"""The models of one ``model_dir``: discovery, load / unload / index, confined to that directory.

Layouts: ``model_dir/model.onnx`` (one model served as ``--model_name``; a single other ``*.onnx``
file at the top level is accepted too) or a repository ``model_dir/<name>/[<version>/]model.onnx``
of several models; with version directories the highest numeric version is served.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from server.errors import ModelNotFound, ModelNotReady
from server.model import OnnxModel, SessionSettings

logger = logging.getLogger("server.repository")

MODEL_FILE = "model.onnx"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class RepositoryError(ValueError):
    """``model_dir`` does not hold a servable layout."""


def _model_file(directory: Path) -> tuple[Path, str] | None:
    """``(file, version)`` for a model directory, or None when it holds no model."""
    direct = directory / MODEL_FILE
    if direct.is_file():
        return direct, "1"
    versions = sorted(
        (int(p.name), p / MODEL_FILE) for p in directory.iterdir() if p.name.isdigit() and (p / MODEL_FILE).is_file()
    )
    if versions:
        number, path = versions[-1]
        return path, str(number)
    return None


class ModelRepository:
    def __init__(self, model_dir: Path, model_name: str, settings: SessionSettings) -> None:
        self.root = model_dir.resolve()
        self.model_name = model_name
        self.settings = settings
        self.models: dict[str, OnnxModel] = {}
        if not self.root.is_dir():
            raise RepositoryError(f"--model_dir {model_dir} is not a directory")
        self.single = self._single_file()

    def _single_file(self) -> Path | None:
        direct = self.root / MODEL_FILE
        if direct.is_file():
            return direct
        top = sorted(p for p in self.root.glob("*.onnx") if p.is_file())
        if len(top) > 1:
            raise RepositoryError(
                f"--model_dir {self.root} holds several .onnx files ({', '.join(p.name for p in top)}); "
                f"name one {MODEL_FILE} or use a <name>/model.onnx repository"
            )
        return top[0] if top else None

    # --- discovery ------------------------------------------------------------------------------
    def available(self) -> dict[str, tuple[Path, str]]:
        """Every model the directory offers now: name -> (file, version)."""
        if self.single is not None:
            return {self.model_name: (self.single, "1")}
        found: dict[str, tuple[Path, str]] = {}
        for child in sorted(self.root.iterdir()):
            if child.is_dir() and _NAME.match(child.name) and child.resolve().parent == self.root:
                located = _model_file(child)
                if located is not None:
                    found[child.name] = located
        return found

    def locate(self, name: str) -> tuple[Path, str]:
        """The file for model ``name``, never outside ``model_dir`` (ModelNotFound otherwise)."""
        if self.single is not None:
            if name != self.model_name:
                raise ModelNotFound(name)
            return self.single, "1"
        if not _NAME.match(name):
            raise ModelNotFound(name)
        directory = (self.root / name).resolve()
        if directory.parent != self.root or not directory.is_dir():
            raise ModelNotFound(name)
        located = _model_file(directory)
        if located is None or not located[0].resolve().is_relative_to(self.root):
            raise ModelNotFound(name)
        return located

    # --- lifecycle (blocking: call off the event loop once serving) ----------------------------
    def load_all(self) -> list[str]:
        names = list(self.available())
        if not names:
            raise RepositoryError(f"--model_dir {self.root} holds no {MODEL_FILE} and no <name>/model.onnx")
        for name in names:
            self.load(name)
        return names

    def load(self, name: str) -> OnnxModel:
        """Load (or reload) ``name``; the previous instance keeps serving until the new one is ready."""
        path, version = self.locate(name)
        model = OnnxModel(name, path, version, self.settings)
        try:
            model.load()
        except Exception as exc:  # noqa: BLE001 - a broken file is reported, never raised to the client raw
            logger.error("model %s: loading %s failed: %s", name, path, exc)
            raise ModelNotReady(name, f"Loading failed: {exc}") from exc
        previous = self.models.get(name)
        self.models[name] = model
        if previous is not None:
            previous.unload()
        logger.info("model %s: version %s ready from %s", name, version, path)
        return model

    def unload(self, name: str) -> None:
        model = self.models.pop(name, None)
        if model is None:
            raise ModelNotFound(name)
        model.unload()
        logger.info("model %s: unloaded", name)

    def index(self, ready_only: bool = False) -> list[dict[str, str]]:
        """Triton's repository index: every model on disk or loaded, with its state."""
        entries: dict[str, dict[str, str]] = {}
        for name, (_, version) in self.available().items():
            entries[name] = {"name": name, "version": version, "state": "UNAVAILABLE", "reason": "unloaded"}
        for name, model in self.models.items():
            state = "READY" if model.ready else "UNAVAILABLE"
            entries[name] = {"name": name, "version": model.version, "state": state, "reason": ""}
        rows = [entries[n] for n in sorted(entries)]
        return [r for r in rows if r["state"] == "READY"] if ready_only else rows

    def get(self, name: str) -> OnnxModel:
        """A ready model (ModelNotFound / ModelNotReady otherwise) — the check every request makes."""
        model = self.models.get(name)
        if model is None:
            raise ModelNotFound(name)
        if not model.ready:
            raise ModelNotReady(name)
        return model
