"""`vlm` detector: a VLM asked for garment boxes through the annotation API client; boxes rescaled to the photo."""

from __future__ import annotations

import math
from typing import Any

from lookbench.release.config import ApiConfig
from lookbench.release.detect.base import Box, Photo
from lookbench.release.vlm.asker import InvalidAnswers, StructuredAsker
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import user_message
from lookbench.release.vlm.images import data_url, prepared
from lookbench.taxonomy import Taxonomy

PROMPT_VERSION = "detect-v1"


def detection_schema(taxonomy: Taxonomy) -> dict[str, Any]:
    """JSON Schema of an answer: a list of garments, each a taxonomy category and a pixel box."""
    box = {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4}
    garment = {
        "type": "object",
        "properties": {"category": {"enum": list(taxonomy.categories)}, "box": box},
        "required": ["category", "box"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"garments": {"type": "array", "items": garment}},
        "required": ["garments"],
        "additionalProperties": False,
    }


def detection_prompt(width: int, height: int) -> str:
    """Instructions; boxes are asked in the pixel frame of the image as sent."""
    return (
        f"The image is {width}x{height} pixels and shows a person in a street photo. "
        "List every visible garment, shoe and bag, one entry each, with its category and its bounding box "
        "[x0, y0, x1, y1] in pixels of this image (x to the right, y down). Answer with JSON only."
    )


def garments_of(answer: Any) -> list[Any]:
    """The garment list of a decoded answer; ValueError if the answer does not have one."""
    garments = answer.get("garments") if isinstance(answer, dict) else None
    if not isinstance(garments, list):
        raise ValueError(f"not a garment list: {str(answer)[:80]!r}")
    return garments


def parse_boxes(garments: list[Any], taxonomy: Taxonomy, scale: tuple[float, float]) -> list[Box]:
    """Boxes from an answer's garments, rescaled by (sx, sy); entries of unknown category or malformed boxes skipped."""
    boxes = []
    for entry in garments:
        box = entry.get("box") if isinstance(entry, dict) else None
        if not isinstance(box, list) or len(box) != 4 or entry.get("category") not in taxonomy.categories:
            continue
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box):
            continue
        sx, sy = scale
        boxes.append(Box(entry["category"], (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy)))
    return boxes


class VLMDetector:
    """One request per photo (cached by endpoint + model + prompt version + schema hash + photo and sent size)."""

    name = "vlm"
    device = "cpu"

    def __init__(self, api: ApiConfig, taxonomy: Taxonomy, cache: AnswerCache, attempts: int = 2) -> None:
        self.api = api
        self.taxonomy = taxonomy
        self.asker = StructuredAsker(api, cache, attempts)
        self.schema = detection_schema(taxonomy)

    def detect(self, photo: Photo) -> list[Box]:
        """Boxes in photo pixels; none when the answers stay invalid (ApiRejected and ApiUnavailable propagate)."""
        jpeg, (width, height) = prepared(photo.data, self.api.max_side)
        scale = (photo.width / width, photo.height / height)
        key = self.asker.key(PROMPT_VERSION, self.schema, photo.sha256, f"{width}x{height}")
        garments = self.asker.cached(key, garments_of)
        if garments is None:
            messages = [user_message(detection_prompt(width, height), data_url(jpeg))]
            try:
                garments = self.asker.ask(key, messages, "garments", self.schema, garments_of)[0]
            except InvalidAnswers:
                return []
        return parse_boxes(garments, self.taxonomy, scale)

    def describe(self) -> dict[str, Any]:
        """Backend, model, prompt version and usage."""
        return {
            "backend": self.name,
            "model": self.api.model,
            "prompt_version": PROMPT_VERSION,
            **self.asker.client.usage.summary(),
        }
