"""GPQA Diamond rows as gpqa_diamond.yaml asks for them: one question, four options A-D, the answer letter.

The data set lists the correct answer first and three wrong ones after it. The options are put
in an order that depends only on the question's own record id (a SHA-256 of it), so the
correct answer's position is spread over A-D and every run asks the same question the same
way, whatever the harness's random seed. Runs inside the serving container: standard library only.
"""

import hashlib
import re

LETTERS = "ABCD"
ANSWER_FIELDS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def clean(text):
    """Trim, drop the data set's ' [title]' markers and collapse doubled spaces."""
    text = str(text or "").strip().replace(" [title]", ". ")
    return re.sub(r"\s{2,}", " ", text)


def _order(record_id):
    """A permutation of 0-3 fixed by the record id."""
    digest = hashlib.sha256(str(record_id).encode("utf-8")).digest()
    return sorted(range(4), key=lambda index: (digest[index], index))


def to_row(doc):
    answers = [clean(doc.get(field)) for field in ANSWER_FIELDS]
    order = _order(doc.get("Record ID") or doc.get("Question"))
    options = [answers[index] for index in order]
    row = {"question": clean(doc.get("Question")), "answer": LETTERS[order.index(0)]}
    for letter, option in zip(LETTERS, options):
        row["option_" + letter.lower()] = option
    return row


def process_docs(dataset):
    """The lm-eval hook: map every record of the data set to the fields the task's prompt names."""
    return dataset.map(to_row, remove_columns=list(dataset.column_names))
