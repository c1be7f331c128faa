"""What it takes to reject the negatives of each NSPDA language, near misses against random strings.

Each test negative (`pda-NAME` and `pda-NAME-random`, the fixed splits every model is scored on) is put in the
first tier that rejects it:
- `finite`: a finite-state check rejects it: the language's block pattern and length parity (a^n b^n: a+b+ of even
  length; the palindrome: one c, odd length; Dyck(2): even length);
- `counter`: one or two counters do (a^n b^n: as many b's as a's; the palindrome: the c in the middle; Dyck(2):
  balanced when the two bracket types are taken as one, never below zero);
- `stack`: only a stack does (the palindrome's mismatched halves, Dyck(2)'s mismatched types).
a^n b^n c b^m a^m and a^(n+m) b^n c^m need counters only, so they have no `stack` tier. A model with no stack and
no counter can reach at most the `finite` share of the negatives; the paper's baselines (at most 50 units, no stack)
reach 9-15 % test error on the palindromes, where near misses leave most negatives to the `stack` tier.

    python scripts/negative_kinds.py [SPLIT]        # SPLIT: test (default), train, test-480, test-960

Prints a markdown table: per language and kind of negative, the shares (%) of the split's negatives in each tier.
"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stackparse.tasks import get_task  # noqa: E402


def counts_balance(string: str, opens: str, closes: str) -> bool:
    """Whether `string` is balanced when every symbol of `opens` opens and every one of `closes` closes."""
    depth = 0
    for symbol in string:
        depth += 1 if symbol in opens else -1 if symbol in closes else 0
        if depth < 0:
            return False
    return depth == 0


def finite(language: str, s: str) -> bool:
    """Whether the language's finite-state hull holds `s` (its block pattern and length parity)."""
    pattern, parity = {"palindrome": ("[ab]*c[ab]*", 1), "anbn": ("a+b+", 0), "anbncbmam": ("a+b+cb+a+", 1),
                       "anmbncm": ("a+b+c+", 0), "dyck2": ("[()\\[\\]]*", 0)}[language]
    return re.fullmatch(pattern, s) is not None and len(s) % 2 == parity


def counter(language: str, s: str) -> bool:
    """Whether counters accept `s` (given `finite`): the counts the language fixes, without the stack's order."""
    if language == "palindrome":
        return s.index("c") == len(s) // 2
    if language == "anbn":
        return s.count("a") == s.count("b")
    if language == "anbncbmam":
        left, right = s.split("c")
        return left.count("a") == left.count("b") and right.count("a") == right.count("b")
    if language == "anmbncm":
        return s.count("a") == s.count("b") + s.count("c")
    return counts_balance(s, "([", ")]")


def tier(language: str, s: str) -> str:
    """The first tier that rejects the negative `s` (module docstring)."""
    return "finite" if not finite(language, s) else "counter" if not counter(language, s) else "stack"


def main(split: str = "test") -> None:
    print(f"| language | negatives | finite-state % | counter % | stack only % | negatives in `{split}` |")
    print("|---|---|---|---|---|---|")
    for language in ("palindrome", "anbn", "anbncbmam", "anmbncm", "dyck2"):
        for kind in ("", "-random"):
            task = get_task(f"pda-{language}{kind}")
            negatives = [task.decode(e.inputs) for e in task.split(split) if not e.targets[-1]]
            tiers = [tier(language, s) for s in negatives]
            shares = [100 * tiers.count(t) / len(tiers) for t in ("finite", "counter", "stack")]
            cells = " | ".join(f"{share:.1f}" for share in shares)
            print(f"| {language} | {'random' if kind else 'near miss'} | {cells} | {len(tiers)} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
