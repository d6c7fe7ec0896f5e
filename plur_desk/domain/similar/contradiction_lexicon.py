"""Small English word lists the contradiction rules read: negators, opposite pairs, bounds, dates, past tense.

General vocabulary, not a list of known conflicts: opposites a style guide or a runbook uses ("enabled" /
"disabled", "before" / "after", "ascending" / "descending"), plus the prefixes that negate a word (un-, in-, dis-).
"""

from __future__ import annotations


def _set(*chunks: str) -> frozenset[str]:
    return frozenset(" ".join(chunks).split())


NEGATORS = _set("not no never none nobody nothing neither nor without avoid")

_OPPOSITES = """
enable disable|enabled disabled|on off|true false|allow forbid|allowed forbidden|allow deny|allowed denied|
permit forbid|permitted forbidden|accept reject|accepted rejected|include exclude|included excluded|
including excluding|inclusive exclusive|add remove|added removed|open closed|start stop|started stopped|
increase decrease|increased decreased|increasing decreasing|raise lower|more less|more fewer|most least|many few|
higher lower|high low|larger smaller|large small|bigger smaller|big small|maximum minimum|max min|above below|
over under|before after|early late|earlier later|earliest latest|first last|oldest newest|old new|
ascending descending|long short|longer shorter|fast slow|faster slower|quick slow|warm cool|warmer cooler|hot cold|
light dark|public private|internal external|synchronous asynchronous|sync async|automatic manual|
automatically manually|required optional|mandatory optional|eager lazy|eagerly lazily|server client|
success failure|succeed fail|succeeded failed|pass fail|passed failed|win lose|good bad|well badly|better worse|
best worst|like dislike|love hate|up down|green red|online offline|inside outside|encrypted plaintext|
upper lower|uppercase lowercase|horizontal vertical|left right|top bottom|north south|east west|always sometimes|
everyone nobody|all none|mutable immutable|strict lenient|static dynamic|absolute relative|local remote|
ahead behind|increment decrement|plus minus|wide narrow|thick thin|heavy light|cheap expensive|safe dangerous
"""
_NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-")


def stem(word: str) -> str:
    """A crude stem (plural -s, -ed, -ing dropped) so that `approvals`/`approval` and `encrypt`/`encrypted` align."""
    if not word.isalpha():
        return word
    if len(word) > 5 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 6 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-1]
    return word


def _pairs() -> frozenset[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for item in _OPPOSITES.replace("\n", "").split("|"):
        left, right = item.split()
        for x, y in ((stem(left), stem(right)), (left, right)):
            pairs.add((x, y))
            pairs.add((y, x))
    return frozenset(pairs)


_PAIRS = _pairs()


def _partners() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for x, y in _PAIRS:
        found.setdefault(x, set()).add(y)
    return {x: frozenset(ys) for x, ys in found.items()}


_PARTNERS = _partners()  # each listed word's opposites (built once, never changed)
_NO_WORDS: frozenset[str] = frozenset()


def antonyms_of(x: str) -> frozenset[str]:
    """Every word that is `x`'s opposite: listed, or `x` with a negating prefix taken off or put on (safe /
    unsafe), both of at least 4 letters. One set per word, so a judge compares a word with each word opposite it
    by a set lookup (a pairwise test of every removed word with every added one was 85 % of a contradiction check
    of long statements)."""
    listed = _PARTNERS.get(x, _NO_WORDS)
    if len(x) < 4:
        return listed
    prefixed = {p + x for p in _NEGATING_PREFIXES}
    prefixed.update(x[len(p) :] for p in _NEGATING_PREFIXES if x.startswith(p) and len(x) - len(p) >= 4)
    return listed | prefixed


# Words before a number that make it a bound: "at least 12" is a minimum, "under 22" a maximum.
BOUND_WORDS = {
    "least": "min",
    "minimum": "min",
    "above": "min",
    "over": "min",
    "exceed": "min",
    "most": "max",
    "maximum": "max",
    "below": "max",
    "under": "max",
    "within": "max",
    "up": "max",
}

STRICT_BOUNDS = _set("above over exceed below under")  # "above 50" and "below 50" cannot both hold

DATE_WORDS = _set(
    "january february march april may june july august september october november december ",
    "jan feb mar apr jun jul aug sep sept oct nov dec ",
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays ",
    "saturdays sundays weekday weekdays weekend weekends morning afternoon evening night midnight noon ",
    "christmas easter",
)

EPISODIC_MARKERS = _set("yesterday today tonight overnight ago was were had did")

# Common irregular past-tense verbs (the regular ones end in -ed and are found by shape).
PAST_VERBS = _set(
    "was were had did went took got felt slept found made came ran left held began broke fell grew gave kept ",
    "knew lost met paid put read said sat saw sent spent stood told thought won wrote hit cut shut led rose ",
    "drove flew ate drank brought bought caught taught fought sold spoke chose froze woke wore tore",
)

# A finite present-tense verb or modal: the statement is a standing fact or a rule, not an event.
PRESENT_MARKERS = _set("is are am has have does do can cannot must should will may shall need needs")
# A participle after these is an adjective ("of paid leave", "a signed build"), not a past-tense verb.
ATTRIBUTIVE_BEFORE = _set("the a an of for in on with to by at from and or")
# Words that carry no content of their own in a diff (PLUR's stop words, auxiliaries, modals, particles).
FUNCTION_WORDS = _set(
    "the and for that this with from are was were been have has but its you your can will should would could may ",
    "might must shall need to be being am is a an of it do does did only also just then than so as at by in on ",
    "or if always every all any ever use using",
)
