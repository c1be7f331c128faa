"""Fixed word vectors from an English lexicon (`corpus get en-lexicon`, then `train-parser --vectors`): what a tagger
cannot learn from the treebank about the words it never saw there, which carry a large share of its mistakes on EWT
(BENCHMARKS.md, "Where the own-tag LAS goes").

The source is the wheel of `spacy-lookups-data` 1.0.5 on PyPI, pinned by its SHA-256 (`parsers.corpus`): WordNet
3.0's lemma lists by part of speech with its inflection rules and exceptions (`en_lemma_*`, the WordNet licence),
and spaCy's English Brown clusters and word log probabilities (`en_lexeme_*`, MIT). Each word's vector holds one
number a feature; the parser's token layer V gives each its own learned direction, so a 0/1 feature is a learned
embedding added in, and the vectors themselves stay fixed (`parsers.model`):

    4  the lower-cased form is a WordNet noun / verb / adjective / adverb lemma (0 or 1)
    4  it is an inflected form of one: an exception listed for that class, or a rule's suffix undone (0 or 1)
    3  the log probability of the form and of its lower-cased form, (p + 20) / 10, and how much likelier the
       capitalised spelling is than the lower-cased one, clipped to [-1, 1] (proper nouns are capitalised)
   16  the Brown cluster's path from the root, +1 or -1 a level for the branch taken, 0 past its end

The `limit` likeliest words of the probability table are written, each as spelled there (the parser looks a form up
as it is, then lower-cased).
"""
from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import numpy as np

CLASSES = ("noun", "verb", "adj", "adv")
LEVELS = 16
TABLES = ("lemma_index", "lemma_exc", "lemma_rules", "lexeme_cluster", "lexeme_prob")
LIMIT = 300_000


def read_tables(wheel: Path) -> dict:
    """The English tables of the spacy-lookups-data wheel, by name (`TABLES`)."""
    with zipfile.ZipFile(wheel) as archive:
        return {name: json.loads(gzip.decompress(archive.read(f"spacy_lookups_data/data/en_{name}.json.gz")))
                for name in TABLES}


def inflected(word: str, lemmas: set[str], exceptions: dict[str, list[str]], rules: list[list[str]]) -> bool:
    """Whether `word` is an inflection of one of `lemmas` (WordNet's morphy: its exceptions, then its rules)."""
    if word in exceptions:
        return True
    return any(word.endswith(old) and word[:len(word) - len(old)] + new in lemmas
               for old, new in rules if old and len(word) > len(old))


def path(cluster: int) -> np.ndarray:
    """The cluster's branches from the root, LEVELS of them (spaCy stores the bit string reversed, as an integer)."""
    bits = bin(cluster)[2:][::-1][:LEVELS] if cluster else ""
    out = np.zeros(LEVELS, dtype=np.float32)
    out[:len(bits)] = [1.0 if b == "1" else -1.0 for b in bits]
    return out


def vectors(tables: dict, limit: int = LIMIT) -> tuple[list[str], np.ndarray]:
    """The words (the `limit` likeliest) and their feature vectors (module docstring)."""
    index = {c: set(words) for c, words in tables["lemma_index"].items()}
    exceptions, rules = tables["lemma_exc"], tables["lemma_rules"]
    clusters, prob = tables["lexeme_cluster"], tables["lexeme_prob"]
    floor = min(prob.values())
    words = [w for w in sorted(prob, key=prob.get, reverse=True) if w and not any(ch.isspace() for ch in w)][:limit]
    rows = []
    for word in words:
        lower = word.lower()
        lemma = [float(lower in index.get(c, ())) for c in CLASSES]
        forms = [float(inflected(lower, index.get(c, set()), exceptions.get(c, {}), rules.get(c, [])))
                 for c in CLASSES]
        p_lower = prob.get(lower, floor)
        capital = prob.get(lower[:1].upper() + lower[1:], floor)
        logs = [(prob[word] + 20) / 10, (p_lower + 20) / 10, float(np.clip((capital - p_lower) / 5, -1, 1))]
        rows.append(np.concatenate([lemma, forms, logs, path(clusters.get(word, clusters.get(lower, 0)))]))
    return words, np.array(rows, dtype=np.float64).reshape(len(words), 2 * len(CLASSES) + 3 + LEVELS)


def build(wheel: Path, out: Path, limit: int = LIMIT) -> None:
    """Write the vectors of the wheel's tables to `out` (word2vec text format, as `--vectors` reads)."""
    words, matrix = vectors(read_tables(wheel), limit)
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"{len(words)} {matrix.shape[1]}\n")
        for word, row in zip(words, matrix):
            f.write(word + " " + " ".join(f"{x:.3g}" for x in row) + "\n")
