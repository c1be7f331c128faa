"""Vocabularies of a treebank: word forms, characters, UPOS and XPOS tags and dependency labels.

Index 0 of every vocabulary but the labels is the unknown symbol. Word counts are kept for word dropout.
A treebank without XPOS (all `_`) has an empty XPOS vocabulary: the tagger then predicts UPOS only.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

UNK = "<unk>"


def word_key(form: str) -> str:
    """Words are embedded lowercased; the character model sees the original form, case included."""
    return form.lower()


@dataclass
class Vocab:
    words: list[str]
    word_counts: list[int]
    chars: list[str]
    upos: list[str]
    labels: list[str]
    xpos: list[str] = field(default_factory=list)     # (models saved before the tagger have none)
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        self._index = {kind: {s: i for i, s in enumerate(getattr(self, kind))}
                       for kind in ("words", "chars", "upos", "xpos", "labels")}

    @classmethod
    def build(cls, sentences) -> "Vocab":
        """Vocabularies of the training sentences (the labels always include "root")."""
        words = Counter(word_key(w.form) for s in sentences for w in s.words)
        chars = Counter(c for s in sentences for w in s.words for c in w.form)
        upos = sorted({w.upos for s in sentences for w in s.words})
        xpos = sorted({w.xpos for s in sentences for w in s.words} - {"_"})
        labels = sorted({w.deprel for s in sentences for w in s.words} | {"root"})
        ordered = [w for w, _ in words.most_common()]
        return cls([UNK] + ordered, [0] + [words[w] for w in ordered],
                   [UNK] + sorted(chars), [UNK] + upos, labels, [UNK] + xpos if xpos else [])

    def word(self, form: str) -> int:
        return self._index["words"].get(word_key(form), 0)

    def char(self, c: str) -> int:
        return self._index["chars"].get(c, 0)

    def tag(self, upos: str) -> int:
        return self._index["upos"].get(upos, 0)

    def xtag(self, xpos: str) -> int:
        return self._index["xpos"].get(xpos, 0)

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({k: getattr(self, k) for k in
                                          ("words", "word_counts", "chars", "upos", "labels", "xpos")}))

    @classmethod
    def load(cls, path: Path) -> "Vocab":
        return cls(**json.loads(Path(path).read_text()))
