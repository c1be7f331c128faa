"""Train a UDPipe 1 model (Straka & Straková 2017) on a CoNLL-U treebank, for `test-parser --udpipe-model`:
its own tagger and parser, no tokenizer (the benchmark gives gold tokenization). Needs the optional
extra `pip install -e ".[udpipe]"` (ufal.udpipe).

    python scripts/train_udpipe1.py corpora/en.conllu corpora/en-dev.conllu runs/udpipe1/en.udpipe
    python scripts/train_udpipe1.py TRAIN DEV OUT --tagger "iterations=1" --parser "iterations=1"   # quick

The options are UDPipe 1's own (`udpipe --train` documentation, sections "Tagger" and "Parser");
empty ones are its defaults. Training time and accuracy depend on them; parsing speed hardly
depends on the number of iterations.
"""
import argparse
import sys
import time
from pathlib import Path


def read(udpipe, path: Path):
    """The sentences of a CoNLL-U file as UDPipe's `Sentences`."""
    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(path.read_text(encoding="utf-8"))
    error, sentences, sentence = udpipe.ProcessingError(), udpipe.Sentences(), udpipe.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.push_back(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        sys.exit(f"{path}: {error.message}")
    return sentences


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("train", type=Path)
    args.add_argument("dev", type=Path, help="heldout data (UDPipe picks its iterations on it)")
    args.add_argument("out", type=Path, help="the model file to write")
    args.add_argument("--tagger", default="", help="UDPipe tagger options; \"none\": no tagger")
    args.add_argument("--parser", default="", help="UDPipe parser options")
    a = args.parse_args()
    from ufal import udpipe
    start = time.perf_counter()
    error = udpipe.ProcessingError()
    model = udpipe.Trainer.train("morphodita_parsito", read(udpipe, a.train), read(udpipe, a.dev), "none",
                                 a.tagger or udpipe.Trainer.DEFAULT, a.parser or udpipe.Trainer.DEFAULT, error)
    if error.occurred():
        sys.exit(f"UDPipe training failed: {error.message}")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_bytes(model if isinstance(model, bytes) else model.encode("latin-1"))
    print(f"{a.out}: trained in {(time.perf_counter() - start) / 60:.1f} min")


if __name__ == "__main__":
    main()
