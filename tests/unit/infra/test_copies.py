"""copy_value copies as copy.deepcopy does: the same value, nothing shared with the original, a subclass kept."""

import copy

from plur_desk.infra.copies import copy_value
from plur_desk.infra.jsvalues import JsTimestamp


def test_a_copy_is_equal_and_shares_nothing_mutable_with_the_original():
    value = {"id": "ENG-1", "tags": ["a", "b"], "review": {"state": "pending", "n": 3, "x": 0.5}, "gone": None}
    copied = copy_value(value)
    assert copied == value == copy.deepcopy(value)
    copied["tags"].append("c")
    copied["review"]["state"] = "approved"
    assert value["tags"] == ["a", "b"] and value["review"]["state"] == "pending"


def test_a_part_shared_within_the_value_stays_shared_in_the_copy():
    tags = ["a"]
    copied = copy_value({"tags": tags, "also": tags})
    assert copied["tags"] is copied["also"] and copied["tags"] is not tags


def test_a_type_marshal_does_not_write_exactly_is_copied_by_deepcopy():
    """A JsTimestamp (an unquoted YAML date, a str subclass) stays one: the writer never writes it back."""
    copied = copy_value({"created": JsTimestamp("2026-01-01"), "items": [JsTimestamp("2026-01-02")]})
    assert type(copied["created"]) is JsTimestamp and type(copied["items"][0]) is JsTimestamp


def test_a_nan_anywhere_in_the_value_keeps_the_copy_equal_to_the_original():
    """YAML's .nan reads as one shared float object, equal to itself only as that object: a copy with a new NaN
    compared unequal, so an unchanged structured_data: {score: .nan} was signed and journaled as set (to null)."""
    import math

    value = {"structured_data": {"score": math.nan, "runs": [1.5, math.nan]}, "id": "ENG-1"}
    copied = copy_value(value)
    assert copied == value and copied is not value and copied["structured_data"] is not value["structured_data"]
    copied["structured_data"]["runs"].append(2)
    assert len(value["structured_data"]["runs"]) == 2
