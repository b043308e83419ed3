"""The training loop: plain PyTorch, one process or `torchrun` DDP, resumable, validated, exported at the end."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from lookbench._util.atomic import write_text_atomic
from lookbench._util.images import BadImageError, decode_image
from lookbench._util.precision import precision_context, resolve_precision
from lookbench.embeddings.store import default_cache_dir
from lookbench.errors import TrainError
from lookbench.models.registry import create_backbone
from lookbench.results.query_sets import OVERLAP_QUERIES_FILE
from lookbench.snapshot.named import open_location
from lookbench.train import checkpoint as ckpt
from lookbench.train.augment import Transform, evaluation_preprocess, resolved_backend, train_transform
from lookbench.train.config import TrainConfig
from lookbench.train.data import (
    ImageRows,
    TrainingSet,
    load_training_set,
    refuse_reported_validation,
)
from lookbench.train.distributed import World, init_world
from lookbench.train.guard import GUARD_REPORT, apply_guard, guarded_snapshots
from lookbench.train.heads import TrainingModel
from lookbench.train.losses import attribute_loss, category_loss
from lookbench.train.optim import centre_optimizer, freeze_layers, lr_factor, make_optimizer, param_groups, set_lr
from lookbench.train.partial_fc import PartialFC, identity_loss
from lookbench.train.runfolder import claim_train_folder, clear_for_overwrite
from lookbench.train.sampler import MPerClassSampler, StepBatches

LOG = "train.jsonl"
CONFIG_COPY = "config.json"
CHECKPOINTS = "checkpoints"


class AugmentedImages(Dataset):  # type: ignore[type-arg]
    """Decodes and augments training images; indexed by (row, augmentation seed)."""

    def __init__(self, images: ImageRows, origin: list[str], transform: Transform) -> None:
        self.images = images
        self.origin = origin
        self.transform = transform

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, key: tuple[int, int]) -> tuple[torch.Tensor, int]:
        row, seed = key
        try:
            image = decode_image(self.images[row])
        except BadImageError as exc:
            raise TrainError(f"training image {self.origin[row]}: {exc}") from exc
        return self.transform(image, seed), row


@contextlib.contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder/.lock` while training (the OS releases it if the process dies)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform
        yield
        return
    with (folder / ".lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise TrainError(f"{folder} is in use by another training run") from exc
        yield


def worker_errors(loader: DataLoader) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:  # type: ignore[type-arg]
    """The loader's batches; a TrainError raised in a worker comes back as its own message, not a traceback."""
    try:
        yield from loader
    except TrainError as exc:
        text = str(exc).strip()
        if "Traceback" in text:
            text = text.splitlines()[-1].split("TrainError: ", 1)[-1]
        raise TrainError(text) from None


def collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack images; keep the row numbers (labels are looked up in the training process)."""
    return torch.stack([b[0] for b in batch]), torch.tensor([b[1] for b in batch], dtype=torch.int64)


@dataclass(frozen=True)
class WrappedModel:
    """The module the training steps call, and the DDP wrapper inside it (None in one process): whether gradients
    are all-reduced is known from how the model was wrapped, never probed on the module."""

    module: nn.Module
    ddp: nn.parallel.DistributedDataParallel | None

    def accumulating(self, last_micro: bool) -> contextlib.AbstractContextManager[None]:
        """Skip DDP's gradient all-reduce on every micro-batch but a step's last (gradients accumulate locally)."""
        if self.ddp is None or last_micro:
            return contextlib.nullcontext()
        return self.ddp.no_sync()  # type: ignore[no-any-return]


@dataclass
class LabelTensors:
    """Every training row's targets as tensors on the device, indexed by row."""

    classes: torch.Tensor
    category: torch.Tensor
    single: torch.Tensor
    multi: list[torch.Tensor]
    multi_mask: torch.Tensor

    @classmethod
    def of(cls, training: TrainingSet, device: torch.device) -> LabelTensors:
        t = training.targets
        return cls(
            torch.from_numpy(training.classes).to(device),
            torch.from_numpy(t.category).to(device),
            torch.from_numpy(t.single).to(device),
            [torch.from_numpy(t.multi[g]).to(device) for g in training.space.multi_groups],
            torch.from_numpy(t.multi_mask).to(device),
        )


@dataclass
class StepLosses:
    """Loss terms summed over a step's micro-batches, kept on the device (reading them waits for the device)."""

    values: dict[str, torch.Tensor] = field(default_factory=dict)

    def add(self, name: str, value: torch.Tensor, share: float) -> None:
        self.values[name] = self.values.get(name, 0.0) + value.detach().float() * share

    def read(self, step: int) -> dict[str, float]:
        """The values as floats; a non-finite one stops the run."""
        out = {name: float(value) for name, value in self.values.items()}
        if not all(math.isfinite(v) for v in out.values()):
            raise TrainError(f"step {step}: loss is not finite ({out}); lower optim.lr")
        return out


@dataclass
class TrainParts:
    """What `Trainer._build` makes: the network, its identity head (PartialFC) and their optimisers."""

    backbone: Any
    model: TrainingModel
    frozen: int
    pfc: PartialFC | None
    optimizer: torch.optim.Optimizer
    pfc_optimizer: torch.optim.Optimizer | None


@dataclass
class Resume:
    """Where the steps start: a checkpoint's step, validation results and RNG state, or step 0."""

    start: int
    resumed: int | None
    validation: list[dict[str, Any]]
    rng: Any | None


@dataclass(frozen=True)
class StepEnd:
    """What the callbacks see after an optimiser step; `losses` only on log and checkpoint steps."""

    step: int
    total: int
    lr: float
    grad_norm: torch.Tensor | None
    losses: dict[str, float] | None
    seen: int
    elapsed: float


class StepCallback(Protocol):
    """Called after every optimiser step, in the order given (logging, validation, checkpointing)."""

    def __call__(self, end: StepEnd) -> None: ...


@dataclass
class LogSteps:
    """Advances the progress bar; on steps with read losses appends a record to the run's log (`log` on rank 0)."""

    advance: Callable[[int, dict[str, float] | None], None]
    log: Callable[[dict[str, Any]], None] | None

    def __call__(self, end: StepEnd) -> None:
        self.advance(end.step, end.losses)
        if end.losses is not None and self.log is not None:
            self.log(
                {
                    "step": end.step,
                    "lr": end.lr,
                    "grad_norm": None if end.grad_norm is None else float(end.grad_norm),
                    **{f"loss/{k}": v for k, v in end.losses.items()},
                    "images_per_s": end.seen / end.elapsed if end.elapsed else None,
                    "elapsed_s": end.elapsed,
                }
            )


@dataclass
class ValidateSteps:
    """Validates every `every` steps (0: only at the end) and at the last step, appending to `results`."""

    validate: Callable[[int], dict[str, Any]]
    every: int
    results: list[dict[str, Any]]

    def __call__(self, end: StepEnd) -> None:
        if (self.every and end.step % self.every == 0) or end.step == end.total:
            self.results.append(self.validate(end.step))


@dataclass
class CheckpointSteps:
    """Saves a checkpoint every `every` steps and at the last step."""

    save: Callable[[int], None]
    every: int

    def __call__(self, end: StepEnd) -> None:
        if end.step % self.every == 0 or end.step == end.total:
            self.save(end.step)


@dataclass
class TrainResult:
    """What a finished run produced."""

    out: Path
    steps: int
    images: int
    items: int
    validation: list[dict[str, Any]]
    resumed_from: int | None


class Trainer:
    """Runs one config into one output folder (the exported model folder, with logs and checkpoints)."""

    def __init__(
        self,
        cfg: TrainConfig,
        out: Path,
        strict: bool = False,
        overwrite: bool = False,
        progress: bool = True,
        say: Callable[[str], None] = print,
    ) -> None:
        self.cfg = cfg
        self.out = out
        self.strict = strict
        self.overwrite = overwrite
        self.progress = progress
        self.say = say
        self.cache_dir = default_cache_dir()
        if strict and not cfg.data.guard.enabled:
            raise TrainError(
                "--strict with data.guard.enabled: false cannot check anything; enable the guard or drop --strict"
            )

    # -- setup -----------------------------------------------------------------------------------------------------

    def _prepare_folder(self, world: World) -> None:
        if world.is_main:
            finished = (self.out / "model.json").is_file()
            if self.overwrite:
                names = (CHECKPOINTS, LOG, GUARD_REPORT, OVERLAP_QUERIES_FILE, CONFIG_COPY, "validation", "model.json")
                clear_for_overwrite(self.out, names)
            elif finished:
                raise TrainError(f"{self.out} already holds a trained model; use --overwrite to train again")
            self.out.mkdir(parents=True, exist_ok=True)
        world.barrier()

    def _training_set(self, world: World) -> tuple[TrainingSet, dict[str, Any] | None]:
        """Load the data (rank 0 first, so it alone packs the images), then apply the contamination guard."""
        training: TrainingSet | None = None
        refuse_reported_validation(self.cfg.data.validation, self.cfg.data.guard.against, "data.guard.against")
        for turn in (True, False):
            if world.is_main == turn:
                training = load_training_set(self.cfg.data.train, self.cfg.seed, self.cache_dir)
                guard = self.cfg.data.guard
                if guard.enabled:
                    training, report = apply_guard(
                        training,
                        guarded_snapshots(self.cfg.data),
                        guard,
                        self.cache_dir,
                        self.strict,
                        self.out / GUARD_REPORT if world.is_main else None,
                        self.say if world.is_main else lambda _m: None,
                    )
                    self.guard_summary: dict[str, Any] | None = {
                        "summary": report.summary(),
                        "dropped": len(report.overlaps),
                        "checked": report.checked,
                        "against": report.against,
                        "threshold": report.threshold,
                        "colour_threshold": report.colour_threshold,
                        "evaluation_overlap": report.evaluation_overlap,
                    }
                    if world.is_main:
                        for line in report.console_lines():
                            self.say(line)
                else:
                    self.guard_summary = None
            world.barrier()
        assert training is not None
        if self.cfg.loss.identity.weight > 0 and training.num_classes < 2:
            raise TrainError(
                f"the training data holds {training.num_classes} item(s) after the guard: the identity loss needs "
                "at least 2 (with one class every loss and gradient is 0)"
            )
        self.data_fingerprint = training.fingerprint()
        return training, self.guard_summary

    def total_steps(self, images: int) -> int:
        """`schedule.steps`, or epochs over the training images."""
        schedule = self.cfg.schedule
        if schedule.steps is not None:
            return schedule.steps
        assert schedule.epochs is not None
        return max(1, math.ceil(schedule.epochs * images / self.cfg.batch.size))

    # -- the run -----------------------------------------------------------------------------------------------------

    def run(self) -> TrainResult:
        """Train (or resume), validate, checkpoint and export."""
        cfg = self.cfg
        world = init_world(cfg.runtime.device)
        claim = claim_train_folder(self.out, cfg, self.overwrite) if world.is_main else None
        try:
            with run_lock(self.out) if world.is_main else contextlib.nullcontext():
                return self._run(world)
        finally:
            if claim is not None:
                claim.record()
            if world.distributed and torch.distributed.is_initialized():
                torch.distributed.destroy_process_group()

    def _run(self, world: World) -> TrainResult:
        """Build, resume, then step with logging, validation and checkpointing as callbacks; export at the end."""
        cfg = self.cfg
        if cfg.runtime.threads:
            torch.set_num_threads(cfg.runtime.threads)
        self._prepare_folder(world)
        training, _guard = self._training_set(world)
        total = self.total_steps(len(training))
        if world.is_main:
            self._announce(training, total, world)
        parts = self._build(training, world)
        resume = self._resume(parts, training, world)
        if world.is_main:
            write_text_atomic(self.out / CONFIG_COPY, json.dumps(self.cfg.model_dump(mode="json"), indent=2) + "\n")
        trained = self._wrap(parts.model, world)
        labels = LabelTensors.of(training, world.device)
        loader = self._loader(training, parts.backbone, resume.start, total, world)
        if resume.start >= total:
            self.say(f"already at step {resume.start} of {total}")
        # every rank draws its own dropout / drop-path noise; restored on resume
        torch.manual_seed(cfg.seed * 1_000_003 + world.rank + 1)
        if resume.rng is not None:
            ckpt.set_rng_state(resume.rng)
        validation = resume.validation
        with self._progress(resume.start, total, world) as advance:
            callbacks: list[StepCallback] = [LogSteps(advance, self._log if world.is_main else None)]
            if cfg.data.validation:
                validate = functools.partial(self._validate, parts.model, world=world)
                callbacks.append(ValidateSteps(validate, cfg.data.validation.every_steps, validation))
            checkpoint = functools.partial(self._checkpoint, world=world, parts=parts, validation=validation)
            callbacks.append(CheckpointSteps(checkpoint, cfg.checkpoint.every_steps))
            step = self._steps(trained, parts, loader, labels, resume.start, total, world, callbacks)
        if world.is_main:
            self._export(parts.model, training, step, validation)
        world.barrier()
        return TrainResult(self.out, step, len(training), training.num_classes, validation, resume.resumed)

    def _announce(self, training: TrainingSet, total: int, world: World) -> None:
        self.say(
            f"training set: {len(training)} images of {training.num_classes} items from "
            f"{', '.join(s.snapshot for s in training.sources)}; {total} steps of {self.cfg.batch.size} images; "
            f"{world.size} process(es) on {world.device}; augmentations: {resolved_backend(self.cfg.augment)}"
        )
        unknown = training.targets.unknown
        if unknown:
            common = ", ".join(f"{label} ({n})" for label, n in unknown.most_common(5))
            self.say(f"labels outside the taxonomy, ignored: {sum(unknown.values())} ({common})")

    def _build(self, training: TrainingSet, world: World) -> TrainParts:
        """The network, its identity head and their optimisers, initialised from the seed."""
        cfg = self.cfg
        torch.manual_seed(cfg.seed)
        backbone = create_backbone(cfg.model.backbone)
        frozen = freeze_layers(backbone, cfg.model.freeze_layers)
        if cfg.model.grad_checkpointing:
            backbone.set_grad_checkpointing(True)
        model = TrainingModel(
            backbone,
            cfg.model.embedding_dim,
            training.space,
            category=cfg.loss.category.weight > 0,
            attributes=cfg.loss.attributes.weight > 0,
        ).to(world.device)
        if cfg.runtime.channels_last:
            model = model.to(memory_format=torch.channels_last)
        pfc = None
        if cfg.loss.identity.weight > 0:
            pfc = identity_loss(
                cfg.loss.identity, training.num_classes, model.embedder.head.dim, world.rank, world.size, cfg.seed
            ).to(world.device)
        heads: list[nn.Module] = [model.embedder.head] + [
            m for m in (model.category, model.single, model.multi) if m is not None
        ]
        optimizer = make_optimizer(param_groups(backbone, heads, cfg.optim), cfg.optim)
        pfc_optimizer = None
        if pfc is not None:
            pfc_optimizer = centre_optimizer(pfc.weight, cfg.loss.identity, cfg.optim)
        return TrainParts(backbone, model, frozen, pfc, optimizer, pfc_optimizer)

    def _resume(self, parts: TrainParts, training: TrainingSet, world: World) -> Resume:
        """Restore the latest matching checkpoint, or start afresh (imprinting class centres if configured)."""
        cfg = self.cfg
        found = ckpt.load_latest(self.out / CHECKPOINTS, world, cfg.fingerprint(), self.data_fingerprint)
        if found is not None:
            parts.model.load_state_dict(found.main["model"])
            parts.optimizer.load_state_dict(found.main["optimizer"])
            if parts.pfc is not None and parts.pfc_optimizer is not None:
                parts.pfc.load_state_dict(found.rank["pfc"])
                parts.pfc_optimizer.load_state_dict(found.rank["pfc_optimizer"])
            if world.is_main:
                self._trim_log(found.step)
                self.say(f"resuming from step {found.step} ({self.out / CHECKPOINTS})")
            return Resume(found.step, found.step, list(found.main.get("validation", [])), found.rank["rng"])
        if world.is_main:
            (self.out / LOG).unlink(missing_ok=True)
            self.say(
                f"parameters: {sum(p.numel() for p in parts.model.parameters()) / 1e6:.2f}M "
                f"({parts.frozen} tensors frozen)"
            )
        if parts.pfc is not None and cfg.loss.identity.init == "class_mean":
            from lookbench.train.imprint import imprint_centres

            size = cfg.model.image_size or parts.backbone.preprocess.crop
            embedded = imprint_centres(
                parts.pfc,
                parts.model.embedder,
                training,
                evaluation_preprocess(parts.backbone.preprocess, size),
                world.device,
                cfg.batch.size,
                cfg.data.workers,
            )
            if world.is_main:
                self.say(f"class centres imprinted from {embedded} images (rank 0's shard)")
        return Resume(0, None, [], None)

    def _wrap(self, model: TrainingModel, world: World) -> WrappedModel:
        """The module the steps call: DDP across processes, compiled if configured."""
        trained: nn.Module = model
        ddp = None
        if world.distributed:
            ddp = nn.parallel.DistributedDataParallel(
                model, device_ids=[world.device.index] if world.device.type == "cuda" else None
            )
            trained = ddp
        if self.cfg.model.compile:
            trained = torch.compile(trained)  # type: ignore[assignment]
        return WrappedModel(trained, ddp)

    def _loader(self, training: TrainingSet, backbone: Any, start: int, total: int, world: World) -> DataLoader:  # type: ignore[type-arg]
        """This rank's augmented batches from step `start` to `total`."""
        cfg = self.cfg
        sampler = MPerClassSampler(training.classes, cfg.batch.size, cfg.batch.m_per_class, cfg.seed)
        batches = StepBatches(sampler, start, total, cfg.optim.accumulation, world.size, world.rank)
        transform = train_transform(cfg.augment, cfg.model.image_size or backbone.preprocess.crop, backbone.preprocess)
        workers = cfg.data.workers
        return DataLoader(
            AugmentedImages(training.images, training.origin, transform),
            batch_sampler=batches,
            num_workers=workers,
            collate_fn=collate,
            pin_memory=world.device.type == "cuda",
            prefetch_factor=4 if workers else None,
            # its own generator: creating the iterator must not draw from the global RNG a resume restores
            generator=torch.Generator().manual_seed(cfg.seed),
        )

    def _steps(
        self,
        trained: WrappedModel,
        parts: TrainParts,
        loader: DataLoader,  # type: ignore[type-arg]
        labels: LabelTensors,
        start: int,
        total: int,
        world: World,
        callbacks: list[StepCallback],
    ) -> int:
        """Run the loader's micro-batches, stepping the optimisers every `accumulation`; returns the last step."""
        cfg = self.cfg
        precision = resolve_precision(torch, cfg.runtime.precision, str(world.device), "runtime.precision", TrainError)
        accumulation = cfg.optim.accumulation
        losses = StepLosses()
        step, seen, micro = start, 0, 0
        started = time.perf_counter()
        for images, rows in worker_errors(loader):
            last_micro = micro == accumulation - 1
            images = images.to(world.device, non_blocking=True)
            if cfg.runtime.channels_last:
                images = images.contiguous(memory_format=torch.channels_last)
            rows = rows.to(world.device)
            with trained.accumulating(last_micro):
                with precision_context(torch, precision, str(world.device)):
                    outputs = trained.module(images)
                    loss = self._loss(outputs, rows, labels, parts.pfc, losses, accumulation)
                (loss / accumulation).backward()
            seen += len(rows) * world.size
            micro += 1
            if not last_micro:
                continue
            micro = 0
            factor, norm = self._optimizer_step(parts, step, total)
            step += 1
            # reading losses waits for the device: only on log and checkpoint steps
            due = step % cfg.log_every_steps == 0 or step % cfg.checkpoint.every_steps == 0 or step == total
            values = losses.read(step) if due else None
            losses = StepLosses()
            end = StepEnd(step, total, cfg.optim.lr * factor, norm, values, seen, time.perf_counter() - started)
            for callback in callbacks:
                callback(end)
        return step

    def _optimizer_step(self, parts: TrainParts, step: int, total: int) -> tuple[float, torch.Tensor | None]:
        """Set the scheduled learning rates, clip, step and clear; returns the lr factor and the gradient norm."""
        cfg = self.cfg
        factor = lr_factor(step, total, cfg.schedule)
        set_lr(parts.optimizer, cfg.optim.lr, factor)
        norm = (
            torch.nn.utils.clip_grad_norm_(parts.model.parameters(), cfg.optim.clip_grad_norm)
            if cfg.optim.clip_grad_norm
            else None
        )
        parts.optimizer.step()
        parts.optimizer.zero_grad(set_to_none=True)
        if parts.pfc_optimizer is not None:
            set_lr(parts.pfc_optimizer, cfg.loss.identity.lr, factor)
            parts.pfc_optimizer.step()
            parts.pfc_optimizer.zero_grad(set_to_none=True)
        return factor, norm

    # -- pieces ------------------------------------------------------------------------------------------------------

    def _loss(
        self,
        outputs: Any,
        rows: torch.Tensor,
        labels: LabelTensors,
        pfc: PartialFC | None,
        losses: StepLosses,
        accumulation: int,
    ) -> torch.Tensor:
        weights = self.cfg.loss
        share = 1.0 / accumulation
        total = outputs.embedding.new_zeros(())
        if pfc is not None:
            identity = pfc(outputs.embedding, labels.classes[rows])
            losses.add("identity", identity, share)
            total = total + weights.identity.weight * identity
        if outputs.category is not None:
            value = category_loss(outputs.category, labels.category[rows])
            losses.add("category", value, share)
            total = total + weights.category.weight * value
        if outputs.single or outputs.multi:
            value = attribute_loss(
                outputs.single,
                labels.single[rows],
                outputs.multi,
                [m[rows] for m in labels.multi],
                labels.multi_mask[rows],
            )
            losses.add("attributes", value, share)
            total = total + weights.attributes.weight * value
        return total

    def _validate(self, model: TrainingModel, step: int, world: World) -> dict[str, Any]:
        from lookbench.train.validate import validate

        result: dict[str, Any] = {}
        if world.is_main:
            assert self.cfg.data.validation is not None
            snapshot = open_location(self.cfg.data.validation.snapshot)
            result = validate(
                model.embedder,
                model.embedder.backbone.preprocess,
                snapshot,
                self.cfg.data.validation,
                step,
                self.out,
                self.name,
                world.device,
            )
            self.say(f"validation at step {step} on {result['snapshot']}: {result['summary']}")
            self._log({"step": step, "validation": result["metrics"], "snapshot": result["snapshot"]})
        world.barrier()
        return result

    def _checkpoint(self, step: int, world: World, parts: TrainParts, validation: list[dict[str, Any]]) -> None:
        main = {
            "step": step,
            "config_fingerprint": self.cfg.fingerprint(),
            "data_fingerprint": self.data_fingerprint,
            "model": parts.model.state_dict(),
            "optimizer": parts.optimizer.state_dict(),
            "validation": validation,
        }
        rank: dict[str, Any] = {"rng": ckpt.rng_state()}
        if parts.pfc is not None and parts.pfc_optimizer is not None:
            rank["pfc"] = parts.pfc.state_dict()
            rank["pfc_optimizer"] = parts.pfc_optimizer.state_dict()
        ckpt.save_checkpoint(self.out / CHECKPOINTS, step, world, main, rank, self.cfg.checkpoint.keep)

    def _export(self, model: TrainingModel, training: TrainingSet, step: int, validation: list[dict[str, Any]]) -> None:
        from lookbench.train.export import export_model, export_onnx

        info = export_model(
            self.out, model.embedder.cpu(), self.name, self.cfg, training, step, self.guard_summary, validation
        )
        if self.cfg.export.onnx:
            path = export_onnx(self.out, model.embedder)
            self.say(f"wrote {path}")
        self.say(f"exported {info.name} to {self.out}: lookbench eval -m trained:{self.out}")

    @property
    def name(self) -> str:
        """The exported model's name."""
        return self.cfg.export.name or self.out.resolve().name

    def _log(self, record: dict[str, Any]) -> None:
        with (self.out / LOG).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def _trim_log(self, step: int) -> None:
        """Drop log records of steps after the checkpoint being resumed (the killed run's tail)."""
        path = self.out / LOG
        if not path.is_file():
            return
        kept = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                if int(json.loads(line).get("step", 0)) <= step:
                    kept.append(line)
            except (ValueError, AttributeError):
                continue
        write_text_atomic(path, "".join(f"{line}\n" for line in kept))

    @contextlib.contextmanager
    def _progress(
        self, start: int, total: int, world: World
    ) -> Iterator[Callable[[int, dict[str, float] | None], None]]:
        if not (self.progress and world.is_main):
            yield lambda step, values: None
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (
            TextColumn("train"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[losses]}"),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=Console(stderr=True)) as bar:
            task = bar.add_task("train", total=total, completed=start, losses="")

            def advance(step: int, values: dict[str, float] | None) -> None:
                if values is None:
                    bar.update(task, completed=step)
                else:
                    bar.update(task, completed=step, losses=" ".join(f"{k} {v:.3f}" for k, v in values.items()))

            yield advance
