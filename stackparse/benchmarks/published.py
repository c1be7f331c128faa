"""Numbers published in the papers we reproduce, keyed the way our results are.

Joulin & Mikolov (2015), Table 2: percent of n in 1..60 whose deterministic part is predicted
correctly, training on n < 20. Only the columns we have checked against the paper are listed.
"""

JOULIN_MIKOLOV_TABLE2 = {
    # task: {model: percent}
    "anbn":     {"rnn": 25.0, "lstm": 100.0},
    "anbncn":   {"rnn": 23.3, "lstm": 100.0},
    "anbncndn": {"rnn": 13.3, "lstm": 68.3},
    "anb2n":    {"rnn": 23.3, "lstm": 75.0},
    "anbmcnm":  {"rnn": 33.3, "lstm": 100.0},
}
