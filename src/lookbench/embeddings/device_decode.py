"""JPEG decoding, resizing, cropping and normalisation on a torch device, in batches.

On CUDA, `torchvision.io.decode_jpeg` decodes a whole batch with nvJPEG; images of one size are then resized
together with `torch.nn.functional.interpolate(antialias=True)` (Pillow's filters: bicubic a=-0.5, bilinear, with
Pillow's antialiasing support when shrinking), in Pillow's two passes each rounded to 8 bits, cropped or padded by
the model's `Preprocess.plan` and normalised. What the GPU decoder does not take (PNG and other formats, CMYK and
YCCK JPEGs, anything it rejects) goes through the CPU reference path (`decode_image` + `Preprocess`) one image at a
time, so every image decodes exactly when the CPU path would, with the same error messages. The CPU path stays the
reference: the device path differs from it by a level or two of 8 bits per value (docs/models.md). Any device
works, `cpu` included, which is how the tests run it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lookbench._util.images import MAX_PIXELS, BadImageError, decode_image
from lookbench.models.preprocess import Preprocess

_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


@dataclass(frozen=True)
class JpegFrame:
    """What a JPEG's frame header says: colour components (1 grey, 3 YCbCr, 4 CMYK/YCCK) and size."""

    components: int
    width: int
    height: int


def jpeg_frame(data: bytes) -> JpegFrame | None:
    """The frame header of a JPEG; None if `data` is not a JPEG or its header is cut short."""
    if len(data) < 4 or data[:3] != b"\xff\xd8\xff":
        return None
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _STANDALONE:
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if length < 2:
            return None
        if marker in _SOF_MARKERS:
            if pos + 10 > len(data):
                return None
            height = int.from_bytes(data[pos + 5 : pos + 7], "big")
            width = int.from_bytes(data[pos + 7 : pos + 9], "big")
            return JpegFrame(data[pos + 9], width, height)
        if marker == 0xDA:  # start of scan before any frame header
            return None
        pos += 2 + length
    return None


def _gpu_decodable(data: bytes | None) -> bool:
    """A YCbCr or grey JPEG of a size the CPU path would also decode: one pixel limit (`images.MAX_PIXELS`) for
    both, so a larger one goes to the CPU path and is refused there with its message."""
    frame = jpeg_frame(data) if data else None
    if frame is None or frame.components not in (1, 3) or frame.width == 0 or frame.height == 0:
        return False
    return frame.width * frame.height <= MAX_PIXELS


@dataclass
class DeviceBatch:
    """A preprocessed NCHW float32 batch already on the model's device; `ready` is set once its work is queued
    (a CUDA event on the decoding stream, None on devices without streams)."""

    tensor: Any
    ready: Any = None

    def __len__(self) -> int:
        return int(self.tensor.shape[0])


DEPRECATION = ".*image decoding and encoding capabilities of TorchVision.*"
"""torchvision 0.29 deprecates its image codecs in favour of TorchCodec; its JPEG decoder still works."""


class DeviceDecoder:
    """Turns a batch of encoded images into a `DeviceBatch` for `preprocess`, decoding JPEGs on `device`."""

    def __init__(self, preprocess: Preprocess, device: str) -> None:
        from lookbench._util.optional import require

        warnings.filterwarnings("ignore", message=DEPRECATION, category=DeprecationWarning)
        self.torch = require("torch", "torch", "decoding on the device")
        self.io = require("torchvision.io", "gpu", "decoding on the device")
        self.preprocess = preprocess
        self.device = device
        self.cuda = device.startswith("cuda")
        scale, offset = preprocess.affine()
        self.scale = self.torch.from_numpy(scale).to(device)
        self.offset = self.torch.from_numpy(offset).to(device)
        self._streams: dict[int, Any] = {}

    def decode(self, data: list[bytes | None]) -> tuple[DeviceBatch, list[int], dict[int, str]]:
        """(the batch of images that decoded, their positions in `data`, messages by position for the others)."""
        torch = self.torch
        crop = self.preprocess.crop
        with self._stream():
            decoded = self._decode_jpegs(data)
            on_cpu: dict[int, np.ndarray] = {}
            errors: dict[int, str] = {}
            for i, raw in enumerate(data):
                if i not in decoded:
                    try:
                        on_cpu[i] = self.preprocess(decode_image(raw))
                    except (BadImageError, ValueError) as exc:
                        errors[i] = str(exc)
            ok = [i for i in range(len(data)) if i not in errors]
            slot = {i: n for n, i in enumerate(ok)}
            out = torch.empty((len(ok), 3, crop, crop), dtype=torch.float32, device=self.device)
            by_size: dict[tuple[int, int], list[int]] = {}
            for i, image in decoded.items():
                by_size.setdefault((int(image.shape[1]), int(image.shape[2])), []).append(i)
            for (height, width), members in by_size.items():
                pixels = self._resized(torch.stack([decoded[i] for i in members]), width, height)
                first, last = slot[members[0]], slot[members[-1]]
                if last - first + 1 == len(members):  # the usual case: one run of slots, no index tensor
                    out[first : last + 1] = pixels
                else:
                    out[torch.as_tensor([slot[i] for i in members], device=self.device)] = pixels
            for i, array in on_cpu.items():
                out[slot[i]] = torch.from_numpy(array).to(self.device)
            ready = self._record()
        return DeviceBatch(out, ready), ok, errors

    def _decode_jpegs(self, data: list[bytes | None]) -> dict[int, Any]:
        """Batch-decode the YCbCr and grey JPEGs; a batch the decoder rejects is retried one image at a time."""
        torch = self.torch
        picked = [i for i, raw in enumerate(data) if _gpu_decodable(raw)]
        if not picked:
            return {}
        inputs = [torch.frombuffer(bytearray(data[i] or b""), dtype=torch.uint8) for i in picked]
        mode = self.io.ImageReadMode.RGB
        try:
            images = self.io.decode_jpeg(inputs, mode=mode, device=self.device)
            return dict(zip(picked, images, strict=True))
        except RuntimeError:
            decoded = {}
            for i, tensor in zip(picked, inputs, strict=True):
                with contextlib.suppress(RuntimeError):  # the CPU path decodes it or names the error
                    decoded[i] = self.io.decode_jpeg(tensor, mode=mode, device=self.device)
            return decoded

    def _resized(self, images: Any, width: int, height: int) -> Any:
        """NCHW uint8 images of one size -> resized (antialiased, rounded to 8-bit), cropped or padded, normalised."""
        torch = self.torch
        pre = self.preprocess
        plan = pre.plan(width, height)
        pixels = images.float()
        # Pillow resizes in two passes, horizontal then vertical, each rounded and clipped to 8 bits: so do we,
        # which keeps us within a level or two of it even where bicubic overshoots at hard edges.
        for size in ((height, plan.width), (plan.height, plan.width)):
            if tuple(pixels.shape[-2:]) != size:
                pixels = torch.nn.functional.interpolate(
                    pixels, size=size, mode=pre.interpolation, antialias=True, align_corners=False
                )
                pixels = pixels.round_().clamp_(0, 255)
        crop = pre.crop
        if pre.resize_mode == "longest":
            canvas = torch.full((len(images), 3, crop, crop), float(pre.fill), device=pixels.device)
            canvas[:, :, plan.top : plan.top + plan.height, plan.left : plan.left + plan.width] = pixels
            pixels = canvas
        else:
            pixels = pixels[:, :, plan.top : plan.top + crop, plan.left : plan.left + crop]
        return pixels * self.scale - self.offset

    @contextlib.contextmanager
    def _stream(self) -> Iterator[None]:
        """On CUDA, a side stream per decoding thread, so decoding overlaps the model's work."""
        if not self.cuda:
            yield
            return
        import threading

        key = threading.get_ident()
        if key not in self._streams:
            self._streams[key] = self.torch.cuda.Stream(device=self.device)
        with self.torch.cuda.stream(self._streams[key]):
            yield

    def _record(self) -> Any:
        if not self.cuda:
            return None
        event = self.torch.cuda.Event()
        event.record()
        return event
