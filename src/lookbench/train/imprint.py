"""Weight imprinting: start each class centre at the mean embedding of its images under the untrained model.

With random centres, a class's first visits see a target logit near zero against centres already pulled towards
the data, so the identity loss teaches little until every class has been visited (many epochs for a short CPU
run, and it distorts pretrained features meanwhile: the linear-probe-then-fine-tune argument). Imprinted centres
(Qi et al., CVPR 2018) make the target the nearest centre from the first step. Each rank embeds only the images of
its own shard of classes, so no centres are communicated.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from lookbench._util.images import BadImageError, decode_image
from lookbench.errors import TrainError
from lookbench.models.backbones import EmbeddingModel
from lookbench.models.preprocess import Preprocess
from lookbench.train.data import TrainingSet
from lookbench.train.partial_fc import PartialFC


class _Evaluated(Dataset):  # type: ignore[type-arg]
    """Rows of a training set, decoded and preprocessed without augmentation."""

    def __init__(self, training: TrainingSet, rows: np.ndarray, preprocess: Preprocess) -> None:
        self.training, self.rows, self.preprocess = training, rows, preprocess

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        row = int(self.rows[index])
        try:
            image = decode_image(self.training.images[row])
        except BadImageError as exc:
            raise TrainError(f"training image {self.training.origin[row]}: {exc}") from exc
        return torch.from_numpy(self.preprocess(image)), row


def imprint_centres(
    pfc: PartialFC,
    model: EmbeddingModel,
    training: TrainingSet,
    preprocess: Preprocess,
    device: torch.device,
    batch_size: int,
    workers: int,
) -> int:
    """Set this rank's centres to the normalised mean embedding of each class; returns the images embedded."""
    start, count = pfc.class_start, pfc.num_local
    rows = np.flatnonzero((training.classes >= start) & (training.classes < start + count))
    sums = torch.zeros(count, pfc.weight.shape[1], dtype=torch.float64)
    loader = DataLoader(
        _Evaluated(training, rows, preprocess),
        batch_size=batch_size,
        num_workers=workers,
        generator=torch.Generator().manual_seed(0),
    )
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for images, batch_rows in loader:
            embedded = model(images.to(device)).double().cpu()
            local = torch.from_numpy(training.classes[batch_rows.numpy()] - start)
            sums.index_add_(0, local, embedded)
    model.train(was_training)
    centres = F.normalize(sums, dim=1).float()
    with torch.no_grad():
        view = pfc.weight.view(count, pfc.subcenters, -1)
        if pfc.subcenters == 1:
            view.copy_(centres[:, None, :].to(view.device))
        else:  # sub-centres start at the class mean plus their random offsets, so they can still specialise
            view.copy_(centres[:, None, :].to(view.device) + view)
    return len(rows)
