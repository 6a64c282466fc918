"""The models of one ``model_dir``: discovery, load / unload / index, confined to that directory.

Layouts: ``model_dir/model.onnx`` (one model served as ``--model_name``; a single other ``*.onnx``
file at the top level is accepted too) or a repository ``model_dir/<name>/[<version>/]model.onnx``
of several models; with version directories the highest numeric version is served.

Mirrors the model repository of KServe's ``kserve/model_repository.py`` (load / unload / index) and
Triton's repository index states (READY / UNAVAILABLE with a reason). A failed model never stops the
others: its reason is kept for the index. A load that cannot succeed as the directory stands (a corrupt
file, a link out of it) raises LoadRefused, one that may succeed later (memory, open files) ModelNotReady
(server.load_failure draws the line). Error messages name files relative to ``model_dir``, so no
response body carries a server path.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from server.errors import InvalidInput, LoadRefused, ModelNotFound, ModelNotReady
from server.load_failure import may_succeed_later
from server.model import OnnxModel, SessionSettings

logger = logging.getLogger("server.repository")

MODEL_FILE = "model.onnx"
MAX_NAME_LENGTH = 255  # a path component (NAME_MAX)
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


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def load_failed(name: str, exc: BaseException, detail: str) -> ModelNotReady:
    """The error for a load of ``name`` that failed with ``exc``: refused (4xx) unless a retry may succeed."""
    return ModelNotReady(name, detail) if may_succeed_later(exc) else LoadRefused(name, detail)


class ModelRepository:
    def __init__(self, model_dir: Path, model_name: str, settings: SessionSettings) -> None:
        self.given = model_dir
        self.root = model_dir.resolve()
        self.model_name = model_name
        self.settings = settings
        self.models: dict[str, OnnxModel] = {}
        self.failures: dict[str, str] = {}  # name -> why it is not serving (repository index reason)
        if not self.root.is_dir():
            raise RepositoryError(f"--model_dir {model_dir}: no such directory")
        self.single = self._single_file()

    def _single_file(self) -> Path | None:
        direct = self.root / MODEL_FILE
        if direct.is_file():
            top = [direct]
        else:
            top = sorted(p for p in self.root.glob("*.onnx") if p.is_file())
        if len(top) > 1:
            raise RepositoryError(
                f"--model_dir {self.given} holds several .onnx files ({', '.join(p.name for p in top)}); "
                f"name one {MODEL_FILE} or use a <name>/model.onnx repository"
            )
        if top and not top[0].resolve().is_relative_to(self.root):
            raise RepositoryError(f"--model_dir {self.given}: {top[0].name} is a link to a file outside the directory")
        return top[0] if top else None

    def relative(self, path: Path) -> str:
        """``path`` as clients may see it: relative to ``model_dir``."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return path.name

    def redact(self, text: str) -> str:
        """A message with the server's ``model_dir`` path taken out, on one line."""
        return one_line(str(text).replace(f"{self.root}/", "").replace(str(self.root), "."))

    # --- discovery ------------------------------------------------------------------------------
    def available(self) -> dict[str, tuple[Path, str]]:
        """Every model the directory offers now: name -> (file, version). Unusable ones land in failures."""
        if self.single is not None:
            return {self.model_name: (self.single, "1")}
        found: dict[str, tuple[Path, str]] = {}
        for child in sorted(self.root.iterdir()):
            if not (_NAME.match(child.name) and child.is_dir()):
                continue
            try:
                found[child.name] = self.locate(child.name)
            except ModelNotFound:
                continue  # a directory without a model file: not a model
            except ModelNotReady as exc:
                self.failures[child.name] = exc.detail
        return found

    def locate(self, name: str) -> tuple[Path, str]:
        """The file for model ``name``, never outside ``model_dir`` (ModelNotFound otherwise)."""
        if len(name) > MAX_NAME_LENGTH:
            raise InvalidInput(f"model name of {len(name)} characters is longer than {MAX_NAME_LENGTH}")
        if self.single is not None:
            if name != self.model_name:
                raise ModelNotFound(name)
            return self.single, "1"
        if not _NAME.match(name):
            raise ModelNotFound(name)
        try:
            directory = self.root / name
            if not directory.is_dir():
                raise ModelNotFound(name)
            if directory.resolve().parent != self.root:
                raise LoadRefused(name, f"{name} is a link to a directory outside the model repository")
            located = _model_file(directory)
        except OSError as exc:
            raise load_failed(name, exc, f"{name}: {exc.strerror or 'unreadable'}") from None
        if located is None:
            raise ModelNotFound(name)
        if not located[0].resolve().is_relative_to(self.root):
            raise LoadRefused(name, f"{self.relative(located[0])} is a link to a file outside the model repository")
        return located

    # --- lifecycle (blocking: call off the event loop once serving) ----------------------------
    def load_all(self) -> list[str]:
        """Load every model. The single-model layout fails as a whole (RepositoryError); in a repository
        every valid model serves and a bad one stays unavailable with its reason (one log line each)."""
        names = sorted(set(self.available()) | set(self.failures))
        if not names:
            raise RepositoryError(f"--model_dir {self.given} holds no {MODEL_FILE} and no <name>/{MODEL_FILE}")
        for name in names:
            if name not in self.failures:
                try:
                    model = self.build(name)
                except ModelNotReady as exc:
                    if self.single is not None:
                        raise RepositoryError(f"--model_dir {self.given}: model {name}: {exc.detail}") from None
                    self.failures[name] = exc.detail
                else:
                    self.install(model)
                    logger.info("model %s: %s", name, model.summary())
                    continue
            logger.error("model %s: UNAVAILABLE: %s", name, self.failures[name])
        return [n for n in names if n in self.models]

    def load(self, name: str) -> OnnxModel:
        """Build and install ``name`` (blocking); the serving instance keeps serving until then."""
        model = self.build(name)
        self.install(model)
        return model

    def unload(self, name: str) -> None:
        self.remove(name)

    def build(self, name: str) -> OnnxModel:
        """A new, ready instance of ``name`` (not yet serving); LoadRefused / ModelNotReady with the reason when
        it fails (ModelNotFound when the directory has no such model)."""
        path, version = self.locate(name)
        model = OnnxModel(name, path, version, self.settings)
        try:
            model.load()
        except Exception as exc:  # noqa: BLE001 - a broken file is reported, never raised to the client raw
            detail = f"loading {self.relative(path)} failed: {self.redact(str(exc))}"
            raise load_failed(name, exc, detail) from None
        return model

    def install(self, model: OnnxModel) -> OnnxModel | None:
        """Serve ``model`` from now on; returns the instance it replaces (in-flight requests finish on it)."""
        previous = self.models.get(model.name)
        self.models[model.name] = model
        self.failures.pop(model.name, None)
        if previous is not None:
            previous.unload()
        return previous

    def remove(self, name: str) -> OnnxModel:
        model = self.models.pop(name, None)
        if model is None:
            raise ModelNotFound(name)
        model.unload()
        return model

    def index(self, ready_only: bool = False) -> list[dict[str, str]]:
        """Triton's repository index: every model on disk or loaded, with its state."""
        entries: dict[str, dict[str, str]] = {}
        for name, (_, version) in self.available().items():
            entries[name] = {"name": name, "version": version, "state": "UNAVAILABLE", "reason": "unloaded"}
        for name, reason in self.failures.items():
            version = entries.get(name, {}).get("version", "")
            entries[name] = {"name": name, "version": version, "state": "UNAVAILABLE", "reason": reason}
        for name, model in self.models.items():
            state = "READY" if model.ready else "UNAVAILABLE"
            entries[name] = {"name": name, "version": model.version, "state": state, "reason": ""}
        rows = [entries[n] for n in sorted(entries)]
        return [r for r in rows if r["state"] == "READY"] if ready_only else rows

    def get(self, name: str) -> OnnxModel:
        """A ready model (ModelNotFound / ModelNotReady otherwise) — the check every request makes."""
        model = self.models.get(name)
        if model is None:
            reason = self.failures.get(name)
            if reason is not None:
                raise ModelNotReady(name, reason)
            raise ModelNotFound(name)
        if not model.ready:
            raise ModelNotReady(name)
        return model
