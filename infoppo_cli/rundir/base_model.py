"""The base model a run trained, as its records name it: a Hub id and the revision it was at, a model a
preset's synthetic task built (named by its task), or a local directory. Never a cache path where a Hub
id is meant: the manifest's ``base_model`` says which it is (``train/provenance.py`` writes it at
launch); a run recorded before it is described from ``config.model``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def hub_revision(model_id: str) -> str | None:
    """The commit of Hub model ``model_id`` that its ``main`` has in the local cache (what
    ``from_pretrained`` loads); ``None`` when it is not cached (or no Hub id)."""
    from huggingface_hub import try_to_load_from_cache  # lazy: heavy, kept off start-up

    try:
        found = try_to_load_from_cache(model_id, "config.json")
    except Exception:  # an id the cache layout cannot hold is not cached
        return None
    if not isinstance(found, str):
        return None
    parts = Path(found).parts
    return parts[parts.index("snapshots") + 1] if "snapshots" in parts[:-1] else None


def is_local(model: str) -> bool:
    """Whether ``model`` names a directory here rather than a Hub id."""
    return model.startswith(("/", ".", "~")) or Path(model).expanduser().exists()


def hub_record(model: str) -> dict[str, Any]:
    """``{"hub_id", "revision"}`` for a Hub id, ``{"path"}`` for a local model."""
    if is_local(model):
        return {"path": model}
    return {"hub_id": model, "revision": hub_revision(model)}


def recorded_base(record: Mapping[str, Any], model: str | None) -> dict[str, Any]:
    """The manifest's ``base_model``, else one described from ``config.model`` (the revision looked up
    in this machine's cache when the record lacks it); ``{}`` when the run names no model."""
    base = record.get("base_model")
    chosen = dict(base) if isinstance(base, dict) else (hub_record(model) if model else {})
    if chosen.get("hub_id") and not chosen.get("revision"):
        chosen["revision"] = hub_revision(str(chosen["hub_id"]))
    return chosen


def describe_base(base: Mapping[str, Any]) -> str:
    """The base model in a sentence of the model card (Markdown)."""
    if base.get("hub_id"):
        revision = base.get("revision")
        at = f"revision `{revision}`" if revision else "revision unknown (not in the Hub cache here)"
        return f"`{base['hub_id']}` (Hugging Face Hub, {at})"
    if base.get("task"):
        recipe = f", recipe `{base['recipe']}`" if base.get("recipe") else ""
        return (
            f"the model infoppo's `{base['task']}` task builds (preset `{base.get('preset', '?')}`{recipe}; "
            "not a Hub model: `infoppo train --preset "
            f"{base.get('preset', '?')}` builds the same one)"
        )
    if base.get("path"):
        return f"a local model, `{base['path']}`"
    return "`?`"


def base_name(base: Mapping[str, Any]) -> str:
    """The base model in a few words (the card's first line)."""
    if base.get("hub_id"):
        return f"`{base['hub_id']}`"
    if base.get("task"):
        return f"The `{base['task']}` task's model"
    return f"`{base['path']}`" if base.get("path") else "`?`"
