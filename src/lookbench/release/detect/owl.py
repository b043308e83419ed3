"""`owl` detector: a transformers zero-shot detector (OWLv2, or OWL-ViT) asked for one text query per category."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lookbench._util.images import decode_image
from lookbench._util.optional import pick_device, require
from lookbench.errors import ReleaseError
from lookbench.models.hub import ensure_hub_model
from lookbench.models.options import folder_fingerprint
from lookbench.release.config import OwlConfig
from lookbench.release.detect.base import Box, Photo, iou
from lookbench.taxonomy import Taxonomy

# OWLv2 pads a photo to a square (bottom and right) before resizing: its relative boxes are fractions of the
# longer side. OWL-ViT resizes the photo itself to the square input: its relative boxes are fractions of each side.
MODEL_TYPES = ("owlv2", "owlvit")


def queries(config: OwlConfig, taxonomy: Taxonomy) -> tuple[list[str], list[str]]:
    """The queried categories and their text queries, in the same order."""
    names = list(config.categories or taxonomy.categories)
    unknown = [n for n in names if n not in taxonomy.categories]
    if unknown:
        raise ReleaseError(
            f"crop.owl.categories: unknown categories {unknown}; known: {', '.join(taxonomy.categories)}"
        )
    return names, [config.template.replace("{category}", name) for name in names]


def frame_scale(model_type: str, width: int, height: int) -> tuple[float, float]:
    """(sx, sy) turning the model's relative [0, 1] box coordinates into photo pixels."""
    if model_type == "owlv2":
        side = float(max(width, height))
        return side, side
    return float(width), float(height)


def suppressed(boxes: list[Box], nms_iou: float, across_categories: bool, max_boxes: int) -> list[Box]:
    """Greedy non-maximum suppression, best score first; at most `max_boxes` kept."""
    kept: list[Box] = []
    for box in sorted(boxes, key=lambda b: b.score, reverse=True):
        rivals = [k for k in kept if across_categories or k.category == box.category]
        if all(iou(box.bbox, k.bbox) <= nms_iou for k in rivals):
            kept.append(box)
            if len(kept) == max_boxes:
                break
    return kept


def check_owl(config: OwlConfig) -> None:
    """Refuse early what would stop the crop stage: no transformers/torch, or a hub model not cached and unreachable."""
    require("transformers", "hf")
    require("torch", "torch")
    if not Path(config.model).expanduser().exists():
        ensure_hub_model(config.model, f"crop.owl.model {config.model}")


class OwlDetector:
    """Loads the model once; one forward pass per photo against the cached text queries."""

    name = "owl"

    def __init__(self, config: OwlConfig, taxonomy: Taxonomy) -> None:
        self.config = config
        self.categories, self.queries = queries(config, taxonomy)
        local = Path(config.model).expanduser()
        self.source = str(local) if local.exists() else config.model
        if not local.exists():
            ensure_hub_model(config.model, f"crop.owl.model {config.model}")
        transformers = require("transformers", "hf")
        self.torch = require("torch", "torch")
        kwargs: dict[str, Any] = {} if local.exists() or config.revision is None else {"revision": config.revision}
        self.model = transformers.AutoModelForZeroShotObjectDetection.from_pretrained(self.source, **kwargs)
        self.model_type = str(self.model.config.model_type)
        if self.model_type not in MODEL_TYPES:
            raise ReleaseError(
                f"crop.owl.model {config.model}: model type {self.model_type!r} is not one of {MODEL_TYPES}"
            )
        self.processor = transformers.AutoProcessor.from_pretrained(self.source, **kwargs)
        self.device = pick_device(self.torch) if config.device == "auto" else config.device
        self.model = self.model.to(self.device).eval()
        text = self.processor(text=self.queries, padding="max_length", truncation=True, return_tensors="pt")
        self.text = {k: text[k].to(self.device) for k in ("input_ids", "attention_mask")}
        commit = getattr(self.model.config, "_commit_hash", None)
        self.revision = folder_fingerprint(local) if local.is_dir() else str(commit or config.revision or "unknown")

    def detect(self, photo: Photo) -> list[Box]:
        """Boxes in photo pixels, above the threshold, after NMS and the max_boxes cut."""
        image = decode_image(photo.data)
        pixels = self.processor.image_processor(images=image, return_tensors="pt")["pixel_values"]
        with self.torch.inference_mode():
            outputs = self.model(pixel_values=pixels.to(self.device), **self.text)
        # target_sizes=None: relative boxes, scaled here; older transformers scaled OWLv2 boxes by (height, width),
        # ignoring the square padding (huggingface/transformers#27205)
        found = self.processor.image_processor.post_process_object_detection(
            outputs, threshold=self.config.threshold, target_sizes=None
        )[0]
        sx, sy = frame_scale(self.model_type, photo.width, photo.height)
        boxes = [
            Box(self.categories[int(label)], (x0 * sx, y0 * sy, x1 * sx, y1 * sy), float(score))
            for score, label, (x0, y0, x1, y1) in zip(
                found["scores"].tolist(), found["labels"].tolist(), found["boxes"].tolist(), strict=True
            )
        ]
        return suppressed(boxes, self.config.nms_iou, self.config.nms_across_categories, self.config.max_boxes)

    def describe(self) -> dict[str, Any]:
        """Backend, model, revision, device and the detection settings."""
        return {
            "backend": self.name,
            "model": self.config.model,
            "model_type": self.model_type,
            "revision": self.revision,
            "device": self.device,
            "queries": len(self.queries),
            "template": self.config.template,
            "threshold": self.config.threshold,
            "max_boxes": self.config.max_boxes,
            "nms_iou": self.config.nms_iou,
        }
