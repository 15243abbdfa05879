"""Grading: how an answer is read, matched against a rubric, scored, and how rubrics check themselves."""
