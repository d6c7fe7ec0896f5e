"""Names that look alike: UTS #39 skeletons over Unicode's confusables table (shipped in resources), plus case and
blanks, so `Alice`, `alice`, ` Alice` and `Alice` spelt with a Cyrillic A are known to be one name to a reader's eye."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from plur_desk.resources import RESOURCES

TABLE = RESOURCES / "confusables.txt"


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    table: dict[str, str] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        source, target = line.split("\t")
        table[chr(int(source, 16))] = "".join(chr(int(cp, 16)) for cp in target.split())
    return table


def skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, each character mapped to its prototype, NFD again."""
    table = _prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in unicodedata.normalize("NFD", text)))


def name_key(name: str) -> str:
    """What a reader cannot tell apart: case (folded, then the skeleton, then folded again since prototypes are of
    either case), blanks anywhere (a doubled or trailing space, a no-break space) and invisible format characters."""
    visible = "".join(c for c in name if not (c.isspace() or unicodedata.category(c) == "Cf"))
    return skeleton(skeleton(visible.casefold()).casefold())


def confusable(a: str, b: str) -> bool:
    """Two different names a reader could take for one."""
    return a != b and name_key(a) == name_key(b)
