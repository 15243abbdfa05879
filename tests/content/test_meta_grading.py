"""The Meta pack's short-answer rubrics, graded with bot.grading.matching (and the lesson's synonyms, as the
bot reads answers) on realistic answers that are not the pack's own examples.

For each short-answer question: three good answers in different words must grade
correct, and four bad ones must grade wrong (empty, off-topic, the rubric's words in
the wrong relation, and a bare list of the key terms).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from bot.content.loader import load_library
from bot.grading.matching import grade

CONTENT = Path(__file__).parents[2] / "content"


@cache
def library():
    return load_library(CONTENT)


def rubric(question_id: str):
    question = library().questions[question_id]
    assert question.kind == "short" and question.rubric is not None
    return question.rubric


def synonyms():
    return library().lessons["meta-llm-scale"].synonyms


GOOD = {
    "meta-q15": [
        "If a GPU fails you restart from a more recent checkpoint, so less work is lost. The price is that the GPUs "
        "pause during every save.",
        "You lose less progress on each crash, but the checkpoint writes come in bursts that can saturate the storage.",
        "Frequent saves mean less to redo after a failure; each one costs GPU pause time.",
    ],
    "meta-q16": [
        "First check that our privacy policy allows training on the tickets, then remove personal data before "
        "fine-tuning.",
        "Strip PII from the tickets before training and keep a lineage record so we can say what the model saw.",
        "We need customer consent and a PII filter, because once personal data is in the weights only retraining "
        "removes it.",
    ],
    "meta-q12": [
        "Tensor parallelism splits the matrix multiplications of one layer across several GPUs when the layer is "
        "too big for a single GPU. Those GPUs talk at every layer, so it needs the fast links inside a server.",
        "Each layer gets divided across GPUs; because that means lots of communication for every "
        "layer, you keep it on NVLink within one node.",
        "TP shards each layer across the GPUs of one server, since it needs high bandwidth between them.",
    ],
    "meta-q06": [
        "FSDP shards the parameters, gradients and optimizer state across the GPUs so each one only "
        "stores a slice. The price is more communication, because a layer's full weights have to be "
        "gathered before it runs.",
        "Instead of every GPU keeping everything, each GPU keeps only part of the model and optimizer "
        "state and has to all-gather the missing weights over the network, which adds communication overhead.",
        "It splits the model's weights and optimizer state across GPUs to save memory, but you pay with "
        "extra network traffic between the GPUs.",
    ],
    "meta-q07": [
        "Serving only needs the weights and runs forward passes, while training also stores gradients and "
        "optimizer state. Serving is judged on latency per request, training on throughput.",
        "Training takes thousands of GPUs for weeks with parallelism and checkpoints; my small model fits on "
        "one GPU and what I care about is response time and cost per request.",
        "Inference has no backward pass, so it needs much less memory than training, and the model fits on a "
        "single GPU so I don't need parallelism or sharding at all.",
    ],
    "meta-q08": [
        "Pretraining costs millions of GPU-hours, and LoRA freezes the base model and only trains small "
        "low-rank matrices, so it needs far less memory.",
        "Training our own base model would cost millions of dollars on thousands of GPUs. With an adapter we "
        "have far fewer trainable parameters and it fits on a single GPU.",
        "The base stays frozen so we only train a few parameters, and the adapter is a small file we can "
        "version and roll back if it misbehaves.",
    ],
    "meta-q10": [
        "Benchmarks measure general ability, not our refund policy, and they only count if the test "
        "material wasn't in the training data. We need our own golden set.",
        "The model might have memorized the answers, so the scores can be inflated, and public benchmarks "
        "do not test our support use case.",
        "We have to test it on real user questions with our own evals tied to user harm, because a "
        "benchmark is generic tasks, not our domain.",
    ],
}

BAD = {
    "meta-q15": {
        "empty": "",
        "off-topic": "We store our backups in another region in case the data centre floods.",
        "wrong-relation": "Saving more often means you lose more work, but it saves GPU memory by recomputing "
        "the activations.",
        "term-list": "Checkpoints, GPUs, storage, failures, restarts, pause.",
    },
    "meta-q16": {
        "empty": "",
        "off-topic": "Rent a bigger GPU so the fine-tune finishes overnight.",
        "wrong-relation": "Train on everything first and remove PII later; consent doesn't matter for internal "
        "tickets.",
        "term-list": "Consent, PII, lineage, GDPR, governance, tickets.",
    },
    "meta-q12": {
        "empty": "",
        "off-topic": "We split our microservices across two regions to keep latency down.",
        "wrong-relation": "Tensor parallelism puts different layers on different GPUs, and it stays in one server "
        "because those GPUs share memory.",
        "term-list": "Tensor parallelism, matrix multiplications, layer, GPUs, NVLink, bandwidth, server.",
    },
    "meta-q06": {
        "empty": "",
        "off-topic": "I would raise the batch size and add a learning-rate warmup so training is more stable.",
        "wrong-relation": "FSDP copies the whole model to every GPU, so there is no extra communication "
        "between them.",
        "term-list": "FSDP, parameters, gradients, optimizer state, GPUs, sharding, communication.",
    },
    "meta-q07": {
        "empty": "",
        "off-topic": "I used React for the front end and deployed it on a single region.",
        "wrong-relation": "Training fits on a single GPU in an afternoon, while serving needs thousands of "
        "GPUs and computes gradients for every request.",
        "term-list": "Training, inference, GPUs, latency, throughput, gradients, optimizer state, parallelism.",
    },
    "meta-q08": {
        "empty": "",
        "off-topic": "Because Python is easier to hire for than C++ and our team already knows it.",
        "wrong-relation": "LoRA retrains all the weights of the base model, and pretraining is cheaper than "
        "fine-tuning anyway.",
        "term-list": "LoRA, adapter, pretraining, GPU-hours, low-rank, frozen, parameters, open weights.",
    },
    "meta-q10": {
        "empty": "",
        "off-topic": "The support bot needs a nicer avatar and a faster page load.",
        "wrong-relation": "Benchmarks already test our refund policy, so a golden set is not needed, and "
        "contamination makes scores more reliable.",
        "term-list": "Benchmarks, golden set, contamination, evaluation, Llama, metrics, user harm.",
    },
}


def test_every_short_question_is_exercised():
    shorts = {q.id for q in library().questions.values() if q.kind == "short" and q.lesson_id == "meta-llm-scale"}
    assert shorts == set(GOOD) == set(BAD)


def test_the_model_answer_grades_correct():
    for question_id in GOOD:
        question = library().questions[question_id]
        assert grade(question.rubric, question.model_answer, synonyms=synonyms()).correct, question_id


@pytest.mark.parametrize(
    ("question_id", "answer"),
    [(qid, answer) for qid, answers in GOOD.items() for answer in answers],
)
def test_good_answers_grade_correct(question_id, answer):
    result = grade(rubric(question_id), answer, synonyms=synonyms())
    assert result.correct, f"{question_id}: matched only {result.matched} in {answer!r}"


@pytest.mark.parametrize(
    ("question_id", "kind", "answer"),
    [(qid, kind, answer) for qid, answers in BAD.items() for kind, answer in answers.items()],
)
def test_bad_answers_grade_wrong(question_id, kind, answer):
    result = grade(rubric(question_id), answer, synonyms=synonyms())
    assert not result.correct, f"{question_id} ({kind}): wrongly matched {result.matched}"
