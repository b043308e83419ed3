"""`vlm` detector: a VLM asked for garment boxes through the annotation API client; boxes rescaled to the photo."""

from __future__ import annotations

import json
from typing import Any

from lookbench.release.crops.base import Box, Photo
from lookbench.release.part2_config import ApiConfig
from lookbench.release.vlm.cache import AnswerCache, cache_key, schema_hash
from lookbench.release.vlm.client import ChatClient, answer_text, request_body, user_message
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


def is_json_object(text: str) -> bool:
    """True if the text decodes to a JSON object."""
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def parse_boxes(text: str, taxonomy: Taxonomy, scale: tuple[float, float]) -> list[Box]:
    """Boxes from an answer, rescaled by (sx, sy); entries of unknown category or malformed boxes are skipped."""
    try:
        answer = json.loads(text)
    except ValueError:
        return []
    boxes = []
    garments = answer.get("garments") if isinstance(answer, dict) else None
    for entry in garments if isinstance(garments, list) else []:
        box = entry.get("box") if isinstance(entry, dict) else None
        if not isinstance(box, list) or len(box) != 4 or entry.get("category") not in taxonomy.categories:
            continue
        if not all(isinstance(v, (int, float)) for v in box):
            continue
        sx, sy = scale
        boxes.append(Box(entry["category"], (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy)))
    return boxes


class VLMDetector:
    """One request per photo (cached by photo hash + model + prompt version + schema hash)."""

    name = "vlm"

    def __init__(self, api: ApiConfig, taxonomy: Taxonomy, cache: AnswerCache) -> None:
        self.api = api
        self.taxonomy = taxonomy
        self.cache = cache
        self.client = ChatClient(api)
        self.schema = detection_schema(taxonomy)

    def detect(self, photo: Photo) -> list[Box]:
        """Boxes in photo pixels."""
        jpeg, (width, height) = prepared(photo.data, self.api.max_side)
        scale = (photo.width / width, photo.height / height)
        key = cache_key(photo.sha256, self.api.model, PROMPT_VERSION, schema_hash(self.schema))
        cached = self.cache.get(key)
        if cached is None:
            message = user_message(detection_prompt(width, height), data_url(jpeg))
            text = answer_text(self.client.post(request_body(self.api, [message], "garments", self.schema)))
            cached = {"text": text}
            if is_json_object(text):
                self.cache.put(key, cached)  # a malformed answer is asked again on the next run
        else:
            self.client.usage.count("cache_hits")
        return parse_boxes(cached["text"], self.taxonomy, scale)

    def describe(self) -> dict[str, Any]:
        """Backend, model, prompt version and usage."""
        return {
            "backend": self.name,
            "model": self.api.model,
            "prompt_version": PROMPT_VERSION,
            **self.client.usage.summary(),
        }
