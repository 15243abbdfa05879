"""The reading's rules as data: the word lists, and the scope rules, one row each with an answer that states its
phrase and one that does not (tests/core/test_scope_rules.py runs every row). bot.grading.scopes applies the rows.

A scope rule, after medspaCy's ConText: a trigger word (with the word that must follow or precede it), what it
does (opens a negation or a contrast scope that runs forward to the end of its clause, opens nothing, or ends the
scope and aside open before it), and when it applies. A clause ends at a clause break (a comma, semicolon, colon,
! ?, a full stop or an aside in parentheses) and at a terminator row.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

# ---------------------------------------------------------------- word lists

BREAK = ","  # the token that stands for any clause break

# Articles, possessives and demonstratives: ignored on both sides, like fillers.
DETERMINERS = frozenset({"a", "an", "the", "its", "their", "his", "her", "my", "our", "your", "this", "these", "those"})
FILLERS = frozenset({
    "basically", "actually", "really", "simply", "very", "quite", "essentially", "literally", "certainly",
    "definitely", "truly", "um", "umm", "uh", "uhm", "er", "erm", "hmm", "ok", "okay",
})
RELATIVES = frozenset({"where", "which", "who", "whose", "that"})
# After "and": a new clause, with a subject of its own ("and it splits") or the same one ("and is judged on").
AUXILIARIES = frozenset({
    "is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "should", "may", "might",
    "must", "does", "did",
})
PLURAL_BE = frozenset({"are", "were"})  # "X and Y are ...": one subject of two
SUBJECTS = AUXILIARIES | {"it", "they", "we", "you", "i", "he", "she", "there", "that", "this"}
LIST_JOINERS = frozenset({"and", "or"})
# Words that relate other words (with the scope rules' words and RELATIVES): an answer with none is a bare list.
RELATING = frozenset({
    "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "over", "under", "between",
    "among", "through", "across", "within", "per", "about", "than", "as", "after", "before", "during",
    "via", "upon", "inside", "outside", "until", "against", "toward", "towards", "around", "along", "like",
    "it", "its", "they", "them", "their", "he", "she", "his", "her", "we", "our", "us", "you", "your", "i",
    "me", "my", "this", "these", "those", "what", "when", "how", "why", "each", "every", "all", "both",
    "either", "some", "any", "other", "another", "itself", "themselves", "there", "here",
    "be", "is", "are", "was", "were", "been", "being", "am", "have", "has", "had", "do", "does", "did",
    "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "if", "unless", "whether", "then", "only", "also", "just", "even", "still", "always",
    "plus", "minus", "times", "equals", "less", "greater",
})
# In a short answer without separators or connectives, content words that relate too: a verb's particle ("nodes take
# up more memory" is a sentence), and an irregular verb form ("took", "kept": bot.grading.words.irregular_form).
RELATING_CONTENT = frozenset({"up", "down", "off"})


# ---------------------------------------------------------------- scope rules


class When(Enum):
    """A condition on the words around a trigger (bot.grading.scopes tests it)."""

    NOT_AFTER_BREAK = "not right after a clause break"
    STARTS_CLAUSE = "the words after it start a clause: a pronoun or a verb ('and it splits', 'and is judged'), or, " \
                    "after a clause of three words or more, an article, a short noun and a singular verb ('and the " \
                    "model might have memorized it'; not 'the weights and the gradients are', a subject of two)"


class Does(Enum):
    """What a scope rule's trigger does."""

    NEGATE = "opens a negation scope: what it holds is denied"
    CONTRAST = "opens a contrast scope: what it holds is the thing contrasted, and a relative word after the break " \
               "that ends it opens an aside about that thing"
    NOTHING = "opens no scope (a pseudo-negation)"
    UNDO = "ends the negation scope it stands in: a negation inside a negation asserts"
    END = "ends the scope and the aside open before it"


@dataclass(frozen=True)
class ScopeRule:
    """One row: a trigger and what it does, with an answer that `states` the `phrase` and one that does not."""

    name: str
    does: Does
    words: frozenset[str]  # the trigger: any of these words
    phrase: str
    states: str
    does_not_state: str
    followed_by: str = ""  # the word that must follow the trigger ("instead" "of")
    preceded_by: str = ""  # the word that must precede it ("or" "not")
    in_negation: bool = False  # only inside a negation scope (not a contrast's)
    in_contrast: bool = False  # only inside a contrast scope
    within: int = 0  # only this many words after that scope's negator at most, with no "and" or "or" between
    when: When | None = None  # only where this holds
    new_clause: bool = False  # what follows is a new clause (a phrase never runs across it)
    holds: int = 0  # CONTRAST: followed by `undelimited` words or more before a break, it holds only its next
    undelimited: int = 0  # `holds` content words, or the words up to a relative word `relative_within` tokens on
    relative_within: int = 0  # (from the second), which opens an aside that no comma closes


# Exceptions come before the rows they except: a word opens what the first of its rows that applies says. An END
# row applies as well as any other row.
SCOPE_RULES = (
    ScopeRule("not only", Does.NOTHING, frozenset({"not"}), followed_by="only", phrase="extra communication",
              states="it costs not only extra communication", does_not_state="it costs not extra communication"),
    ScopeRule("whether or not", Does.NOTHING, frozenset({"not"}), preceded_by="or", phrase="at least once",
              states="it checks whether or not to loop after running the body at least once",
              does_not_state="it checks whether not to loop after running the body at least once"),
    ScopeRule("unless after a negation", Does.NOTHING, frozenset({"unless"}), in_negation=True,
              phrase="passes the eval gate", states="we wont ship unless it passes the eval gate",
              does_not_state="we ship unless it passes the eval gate"),
    ScopeRule("without close after a negation", Does.UNDO, frozenset({"without"}), in_negation=True, within=4,
              phrase="an eval gate", states="there is no way we ship without an eval gate",
              does_not_state="nothing stops us from shipping without an eval gate"),
    ScopeRule("negators", Does.NEGATE,
              frozenset({"no", "not", "never", "without", "none", "nothing", "nobody", "nowhere", "neither", "nor"}),
              phrase="extra communication", states="it needs extra communication",
              does_not_state="it works without extra communication"),
    ScopeRule("verbs of prevention", Does.NEGATE, frozenset({
        "avoid", "avoids", "avoided", "avoiding", "prevent", "prevents", "prevented", "preventing", "eliminate",
        "eliminates", "eliminated", "eliminating"}), phrase="copies the data",
        states="passing by value copies the data", does_not_state="passing by reference avoids copying the data"),
    ScopeRule("unless", Does.NEGATE, frozenset({"unless"}), phrase="shard the optimizer state",
              states="it fits on one gpu if you shard the optimizer state",
              does_not_state="it fits on one gpu unless you shard the optimizer state"),
    ScopeRule("unlike and vs", Does.CONTRAST, frozenset({"unlike", "vs", "versus"}), holds=2, undelimited=4,
              relative_within=6, phrase="copies the model", states="unlike TP DP copies the model to every GPU",
              does_not_state="unlike copying the model, TP splits each layer"),
    ScopeRule("instead of", Does.CONTRAST, frozenset({"instead"}), followed_by="of", phrase="copy the value",
              states="it passes an address and copies the value",
              does_not_state="it passes an address instead of copying the value"),
    ScopeRule("rather than", Does.CONTRAST, frozenset({"rather"}), followed_by="than", phrase="copy the value",
              states="it passes an address and copies the value",
              does_not_state="it passes an address rather than copying the value"),
    ScopeRule("as opposed to", Does.CONTRAST, frozenset({"opposed"}), followed_by="to", phrase="copy the value",
              states="it passes an address and copies the value",
              does_not_state="it passes an address as opposed to copying the value"),
    ScopeRule("conjunctions", Does.END,
              frozenset({"but", "while", "whereas", "although", "though", "however", "yet", "because", "since", "so"}),
              phrase="extra communication", states="memory is not the cost but extra communication is",
              does_not_state="memory is not the cost and extra communication is"),
    ScopeRule("conditions", Does.END, frozenset({"if", "when", "unless"}), phrase="base case is missing",
              states="the recursion does not stop if the base case is missing",
              does_not_state="it is not true that the base case is missing"),
    ScopeRule("contrast words", Does.END, frozenset({"unlike", "vs", "versus", "instead", "rather"}),
              phrase="fast", states="it is not cheap rather fast", does_not_state="it is not cheap or fast"),
    ScopeRule("a verb after the thing contrasted", Does.END, AUXILIARIES, in_contrast=True, phrase="using an array",
              states="instead of pointers the other way is by using an array",
              does_not_state="it is done instead of pointers by using an array"),
    ScopeRule("where", Does.END, frozenset({"where"}), when=When.NOT_AFTER_BREAK, phrase="each gpu holds a shard",
              states="nothing is replicated where each GPU holds a shard",
              does_not_state="nothing is replicated and each GPU holds a shard"),
    ScopeRule("and with a new clause", Does.END, LIST_JOINERS, when=When.STARTS_CLAUSE, new_clause=True,
              phrase="splits each layer", states="TP isn't about copying the model and it splits each layer",
              does_not_state="TP isn't about copying the model and splitting each layer"),
)

NEGATORS = frozenset().union(*(r.words for r in SCOPE_RULES if r.does is Does.NEGATE))
CONTRASTS = frozenset().union(*(r.words for r in SCOPE_RULES if r.does is Does.CONTRAST and not r.followed_by))
# The words that end a scope wherever they stand.
CLAUSE_WORDS = frozenset().union(*(r.words for r in SCOPE_RULES if r.does is Does.END and r.when is None
                                   and not r.in_contrast))
RELATION_WORDS = NEGATORS | CLAUSE_WORDS | RELATIVES | RELATING
# Words that join clauses but relate no two terms by themselves: a list of terms strung with them ("sharding so
# communication because memory") is still a bare list.
CONNECTIVES = CLAUSE_WORDS | {"then", "also", "plus"}
FUNCTION_WORDS = RELATION_WORDS | DETERMINERS | FILLERS | LIST_JOINERS
