"""Value markers for what js-yaml reads differently from Python (shared by the store and domain layers)."""


class JsTimestamp(str):
    """An *unquoted* YAML timestamp. js-yaml loads it as a JS Date, which PLUR's schema rejects.

    The text is kept as written so the entry can be shown and reported; it is never written back by us.
    """

    __slots__ = ()
