"""One object for each nested mapping or list that many parsed entries repeat.

50,000 engrams repeat a handful of `knowledge_type`, `attribution` (with its `runtime`), `feedback_signals`, `tags`
and empty `associations: []`, each a dict or list of ~56 to 370 bytes made again per engram: ~0.8 KB an engram, ~40 MB
at 50,000. A value directly under an entry's top-level mapping whose marshal bytes equal those of one seen before
becomes that object. Equal marshal bytes load as one structure: the same keys in the same order, values of the same
types (True is not 1, -0.0 is not 0.0), equal; a type marshal refuses (a timestamp js-yaml would type) is not shared.

Parsed values are never changed in place (a snapshot is shared by threads, equal blocks already share one value
through the block cache, and a write applies its edit to a deep copy), so sharing is invisible to readers. marshal
keeps an object written twice in one dump as one (the parse workers' results, the parse cache's chunks).
"""

from __future__ import annotations

import marshal
import sys

SHARED_MAX = 1 << 13  # remembered values; the table is emptied when full (~2 MB)
SHARED_BYTES = 512  # a value whose marshal bytes are longer is not remembered (a statement's worth: seldom repeated)
Shared = dict[bytes, object]  # marshal bytes -> the one object: made by each parse run (a chunk, a call), never global


def share_nested(value: object, table: Shared) -> object:
    """`value` (a parsed entry) with the mappings and lists directly under its top-level mapping replaced by equal
    ones seen before in `table` (in place: the top-level mapping stays its own), and its `content_hash` interned."""
    if type(value) is not dict:
        return value
    digest = value.get("content_hash")
    if type(digest) is str:  # the vector cache's keys and computed content hashes are interned: one string for all
        value["content_hash"] = sys.intern(digest)
    dumps = marshal.dumps
    for name, item in value.items():
        if type(item) is not dict and type(item) is not list:
            continue
        try:
            key = dumps(item)
        except ValueError:
            continue
        if len(key) > SHARED_BYTES:
            continue
        found = table.get(key)
        if found is None:
            if len(table) >= SHARED_MAX:
                table.clear()
            table[key] = item
        elif found is not item:
            value[name] = found  # a value, not a key: the dict's size and order stay
    return value
