"""Where the parser's attachment score on its own tags goes: each word of a treebank in one of four groups (its own
UPOS predicted wrong; its head's wrong; another word's of its sentence wrong; its sentence tagged right), with the
group's LAS in the parse on the gold UPOS and in the parse on the tagger's tags, and the points of the total LAS the
group loses between the two. Also the UAS of the mis-tagged words and their commonest confusions, and with
`--train`, how often the tagger errs on words seen in that training treebank never, 1-4 times, or more.

    python cli.py parse RUN TREEBANK --predict-tags -o own.conllu
    python cli.py parse RUN TREEBANK -o gold.conllu
    python scripts/tag_errors.py TREEBANK own.conllu gold.conllu [--train TRAIN.conllu]

LAS here compares universal relations (subtypes dropped), as `evaluate`'s "LAS (universal)".
"""
import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parsers.conllu_io import read_conllu  # noqa: E402
from parsers.evaluate import check_same_words, universal_relation  # noqa: E402

GROUPS = ("its own tag wrong", "its head's tag wrong", "another tag of its sentence wrong", "its sentence tagged right")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank")
    parser.add_argument("own", help="the parse on the tagger's tags (parse --predict-tags)")
    parser.add_argument("gold", help="the parse on the treebank's UPOS")
    parser.add_argument("--train", help="the training treebank: the tagger's errors by the words' training counts")
    args = parser.parse_args()
    counts = {group: [0, 0, 0] for group in GROUPS}            # words, LAS-right on gold UPOS, on own tags
    attached, confusions = [0, 0], Counter()
    treebank, own, gold = (read_conllu(path)[0] for path in (args.treebank, args.own, args.gold))
    check_same_words(treebank, own)
    check_same_words(treebank, gold)
    for g, o, p in zip(treebank, own, gold):
        wrong = [gw.upos != ow.upos for gw, ow in zip(g.words, o.words)]
        for i, (gw, ow, pw) in enumerate(zip(g.words, o.words, p.words)):
            right = [w.head == gw.head and universal_relation(w.deprel) == universal_relation(gw.deprel)
                     for w in (pw, ow)]
            group = GROUPS[0 if wrong[i] else 1 if gw.head and wrong[gw.head - 1] else 2 if any(wrong) else 3]
            c = counts[group]
            c[0], c[1], c[2] = c[0] + 1, c[1] + right[0], c[2] + right[1]
            if wrong[i]:
                attached[0] += pw.head == gw.head
                attached[1] += ow.head == gw.head
                confusions[gw.upos, ow.upos] += 1
    n = sum(c[0] for c in counts.values())
    print("| word | words | share | LAS, gold UPOS | LAS, own tags | points of the total LAS lost |")
    print("|---|---|---|---|---|---|")
    for group, (k, on_gold, on_own) in counts.items():
        print(f"| {group} | {k} | {100 * k / n:.1f} % | {100 * on_gold / k:.2f} | {100 * on_own / k:.2f} | "
              f"{100 * (on_gold - on_own) / n:.2f} |")
    on_gold, on_own = (sum(c[j] for c in counts.values()) for j in (1, 2))
    print(f"| all | {n} | | {100 * on_gold / n:.2f} | {100 * on_own / n:.2f} | {100 * (on_gold - on_own) / n:.2f} |")
    k = counts[GROUPS[0]][0]
    print(f"\nmis-tagged words, UAS: {100 * attached[0] / k:.2f} on gold UPOS, {100 * attached[1] / k:.2f} on own tags")
    print("commonest confusions (gold -> predicted): " + ", ".join(
        f"{a} -> {b} {count}" for (a, b), count in confusions.most_common(8)))
    if args.train:
        seen = Counter(w.form for s in read_conllu(args.train)[0] for w in s.words)
        bands = ("unseen in training", "seen 1-4 times", "seen 5 times or more")
        words, wrong = [0] * len(bands), [0] * len(bands)
        for g, o in zip(treebank, own):
            for gw, ow in zip(g.words, o.words):
                count = seen[gw.form]
                band = 0 if not count else 1 if count < 5 else 2
                words[band], wrong[band] = words[band] + 1, wrong[band] + (gw.upos != ow.upos)
        print("UPOS errors by the word's training count: " + ", ".join(
            f"{name} {w} words, {100 * e / w:.1f} % mis-tagged, {100 * e / sum(wrong):.0f} % of the errors"
            for name, w, e in zip(bands, words, wrong)))


if __name__ == "__main__":
    main()
