"""PLUR's engram and tension schemas as checks, a mirror of its Zod rules (derived fields: domain/plur_rules/derived.py).

An engram that fails here is one PLUR quarantines: it is kept, shown with the reason, and never rewritten.
Reasons name the field, so `plur-desk check` can say exactly what is wrong.
"""

from __future__ import annotations

import re

from plur_desk.infra.jsvalues import JsTimestamp

ID_RE = re.compile(r"(?:ENG|ABS|META)-[A-Za-z0-9-]+\Z")
STATUSES = ("active", "dormant", "retired", "candidate")
TYPES = ("behavioral", "terminological", "procedural", "architectural")
VISIBILITIES = ("private", "public", "template")
COMMITMENTS = ("exploring", "leaning", "decided", "locked", "draft")
LADDER = ("exploring", "leaning", "decided", "locked")
CLAIM_CLASSES = ("observed", "documented", "structural", "asserted", "inferred", "revised")
POLARITIES = ("do", "dont", None)
PIN_TIERS = ("hard", "soft")  # PLUR 0.21: an absent tier is soft
TENSION_STATUSES = ("detected", "confirmed", "dismissed", "resolved")
TENSION_CATEGORIES = ("factual", "temporal", "superseded")
RELATION_KEYS = ("broader", "narrower", "related", "conflicts", "supersedes", "superseded_by")
MEMORY_CLASSES = ("semantic", "episodic", "procedural", "metacognitive")
COGNITIVE_LEVELS = ("remember", "understand", "apply", "analyze", "evaluate", "create")

_STRING_FIELDS = (
    "rationale",
    "source",
    "domain",
    "content_hash",
    "locked_at",
    "locked_reason",
    "created_at",
    "updated_at",
    "summary",
)
_NULLABLE_STRING_FIELDS = ("pack", "abstract", "derived_from")
_STRING_LIST_FIELDS = ("contraindications", "source_patterns", "tags", "episode_ids")
_NONNEG_INT_FIELDS = ("derivation_count", "write_count", "injection_count", "recurrence_count")


def _is_str(value: object) -> bool:
    return isinstance(value, str) and not isinstance(value, JsTimestamp)


def _is_int(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())


def _is_num(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _dates_in(value: object, path: str) -> str | None:
    if isinstance(value, JsTimestamp):
        return path
    if isinstance(value, dict):
        for key, item in value.items():
            found = _dates_in(item, f"{path}.{key}" if path else key)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _dates_in(item, f"{path}[{index}]")
            if found:
                return found
    return None


def _check_enum(engram: dict[str, object], key: str, allowed: tuple[object, ...], problems: list[str]) -> None:
    if key in engram and engram[key] not in allowed:
        shown = ", ".join(str(a) for a in allowed if a is not None)
        problems.append(f"{key} is {engram[key]!r}; PLUR accepts {shown}")


def _shared_problems(entry: object, dates: bool) -> list[str]:
    """What every PLUR record must be: a mapping without unquoted timestamps (js-yaml reads those as Dates)."""
    if not isinstance(entry, dict):
        return [f"entry is a {type(entry).__name__}, not a mapping"]
    date_path = _dates_in(entry, "") if dates else None
    return [f"{date_path} is an unquoted YAML timestamp (js-yaml reads it as a Date); quote it"] if date_path else []


def engram_problems(engram: object, *, dates: bool = True) -> list[str]:  # noqa: C901 -- one flat list of PLUR schema rules
    """Why PLUR's schema would reject this entry; empty when it is valid.

    `dates=False` skips the search for unquoted timestamps (the caller knows the text has none).
    """
    problems = _shared_problems(engram, dates)
    if not isinstance(engram, dict):
        return problems
    for key in ("id", "status", "type", "scope", "statement"):
        if key not in engram or engram[key] is None:
            problems.append(f"required field {key} is missing")
    if "id" in engram and engram["id"] is not None and (not _is_str(engram["id"]) or not ID_RE.match(engram["id"])):
        problems.append(f"id {engram['id']!r} does not match ENG-/ABS-/META- followed by letters, digits, -")
    for key, allowed in (("status", STATUSES), ("type", TYPES)):
        if engram.get(key) is not None and engram[key] not in allowed:
            problems.append(f"{key} is {engram[key]!r}; PLUR accepts {', '.join(allowed)}")
    _check_enum(engram, "visibility", VISIBILITIES, problems)
    _check_enum(engram, "commitment", COMMITMENTS, problems)
    _check_enum(engram, "claim_class", CLAIM_CLASSES, problems)
    _check_enum(engram, "polarity", POLARITIES, problems)
    if "scope" in engram and engram["scope"] is not None and not _is_str(engram["scope"]):
        problems.append("scope is not a string")
    statement = engram.get("statement")
    if statement is not None and (not _is_str(statement) or len(statement) < 1):
        problems.append("statement must be a non-empty string")
    for key in _STRING_FIELDS:
        if key in engram and not _is_str(engram[key]):
            problems.append(f"{key} must be a string")
    summary = engram.get("summary")
    if _is_str(summary) and _u16len(summary) > 80:  # type: ignore[arg-type]
        problems.append(f"summary is {_u16len(summary)} characters; PLUR allows at most 80")  # type: ignore[arg-type]
    for key in _NULLABLE_STRING_FIELDS:
        if key in engram and engram[key] is not None and not _is_str(engram[key]):
            problems.append(f"{key} must be a string or null")
    for key in _STRING_LIST_FIELDS:
        if key in engram and not (isinstance(engram[key], list) and all(_is_str(v) for v in engram[key])):
            problems.append(f"{key} must be a list of strings")
    for key in _NONNEG_INT_FIELDS:
        if key in engram and not (_is_int(engram[key]) and engram[key] >= 0):
            problems.append(f"{key} must be a whole number >= 0")
    for key in ("version", "engram_version"):
        if key in engram and not (_is_int(engram[key]) and engram[key] >= 1):
            problems.append(f"{key} must be a whole number >= 1")
    for key in ("consolidated", "pinned"):
        if key in engram and not isinstance(engram[key], bool):
            problems.append(f"{key} must be true or false")
    # PLUR after 0.20 (schemas/engram.ts@01ad799, `z.number().int().min(1).max(100).optional()`); 0.20 reads any value
    priority = engram.get("pinned_priority", 1)
    if not (_is_int(priority) and 1 <= priority <= 100):
        problems.append("pinned_priority must be a whole number from 1 to 100 (PLUR 0.21 quarantines it)")
    # PLUR 0.21 (schemas/engram.ts @ agent-memory-atlas-archive/plur-ai--plur 7a917bfb, the pinned two-tier model:
    # `z.enum(['hard', 'soft']).optional()`, so null is refused too); 0.20 reads any value
    if "pinned_tier" in engram and engram["pinned_tier"] not in PIN_TIERS:
        problems.append(f"pinned_tier is {engram['pinned_tier']!r}; PLUR 0.21 accepts hard, soft (it quarantines it)")
    problems.extend(_nested_problems(engram))
    return problems


def _u16len(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _nested_problems(engram: dict[str, object]) -> list[str]:  # noqa: C901 -- one flat list of PLUR schema rules
    problems: list[str] = []
    temporal = engram.get("temporal")
    if "temporal" in engram:
        if not isinstance(temporal, dict):
            problems.append("temporal must be a mapping")
        else:
            if not _is_str(temporal.get("learned_at")):
                problems.append("temporal.learned_at is required when temporal is present (a quoted string)")
            for key in ("valid_from", "valid_until", "ingested_at"):
                if key in temporal and not _is_str(temporal[key]):
                    problems.append(f"temporal.{key} must be a string")
    relations = engram.get("relations")
    if "relations" in engram:
        if not isinstance(relations, dict):
            problems.append("relations must be a mapping")
        else:
            for key in RELATION_KEYS:
                if key in relations and not (
                    isinstance(relations[key], list) and all(_is_str(v) for v in relations[key])
                ):
                    problems.append(f"relations.{key} must be a list of strings")
    activation = engram.get("activation")
    if "activation" in engram:
        if not isinstance(activation, dict):
            problems.append("activation must be a mapping")
        else:
            for key in ("retrieval_strength", "storage_strength"):
                value = activation.get(key)
                if not (_is_num(value) and 0 <= value <= 1):  # type: ignore[operator]
                    problems.append(f"activation.{key} must be a number from 0 to 1")
            if not (_is_int(activation.get("frequency")) and activation["frequency"] >= 0):
                problems.append("activation.frequency must be a whole number >= 0")
            if not _is_str(activation.get("last_accessed")):
                problems.append("activation.last_accessed must be a string")
    sources = engram.get("sources")
    if "sources" in engram:
        if not isinstance(sources, list):
            problems.append("sources must be a list")
        else:
            for index, source in enumerate(sources):
                if (
                    not isinstance(source, dict)
                    or not _is_str(source.get("scope"))
                    or not _is_str(source.get("stored_at"))
                ):
                    problems.append(f"sources[{index}] needs scope and stored_at strings")
                elif source.get("session_id") is not None and not _is_str(source["session_id"]):
                    problems.append(f"sources[{index}].session_id must be a string or null")
                elif "validated_by" in source and not _is_str(source["validated_by"]):
                    # PLUR 0.21 (#1268; schemas/engram.ts @ the archive's 442dce94: `z.string().optional()`)
                    problems.append(f"sources[{index}].validated_by must be a string (PLUR 0.21 quarantines it)")
    knowledge_type = engram.get("knowledge_type")
    if "knowledge_type" in engram and (
        not isinstance(knowledge_type, dict)
        or knowledge_type.get("memory_class") not in MEMORY_CLASSES
        or (knowledge_type.get("cognitive_level") not in COGNITIVE_LEVELS)
    ):
        problems.append("knowledge_type needs a valid memory_class and cognitive_level")
    signals = engram.get("feedback_signals")
    if "feedback_signals" in engram and not (isinstance(signals, dict) and all(_is_int(v) for v in signals.values())):
        problems.append("feedback_signals must be a mapping of whole numbers")
    for key in ("associations", "knowledge_anchors", "entities"):
        if key in engram and not isinstance(engram[key], list):
            problems.append(f"{key} must be a list")
    for key in ("structured_data", "attribution", "provenance", "measured_under", "usage", "episodic", "exchange"):
        if key in engram and not isinstance(engram[key], dict):
            problems.append(f"{key} must be a mapping")
    return problems


def tension_problems(record: object, *, dates: bool = True) -> list[str]:
    """Why PLUR's tension schema would reject this record; empty when valid."""
    problems = _shared_problems(record, dates)
    if not isinstance(record, dict):
        return problems
    for key in ("id", "engram_a", "engram_b", "statement_a", "statement_b", "reason", "detected_at"):
        if not _is_str(record.get(key)):
            problems.append(f"{key} is required (a string)")
    confidence = record.get("confidence")
    if not (_is_num(confidence) and 0 <= confidence <= 1):  # type: ignore[operator]
        problems.append("confidence must be a number from 0 to 1")
    if record.get("status", "detected") not in TENSION_STATUSES:
        problems.append(f"status is {record.get('status')!r}; PLUR accepts {', '.join(TENSION_STATUSES)}")
    if record.get("category", "factual") not in TENSION_CATEGORIES:
        problems.append(f"category is {record.get('category')!r}; PLUR accepts {', '.join(TENSION_CATEGORIES)}")
    for key in ("resolved_by", "resolved_at"):
        if record.get(key) is not None and not _is_str(record.get(key)):
            problems.append(f"{key} must be a string or null")
    return problems
