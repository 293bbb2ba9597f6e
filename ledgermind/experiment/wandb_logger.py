"""Experiment logging to Weights & Biases (offline by default) or nowhere.

Offline is the default because the default run must work on a machine without network or
account; the run files land under the run's output dir and can be uploaded later with
``wandb sync <output_dir>/wandb/offline-run-*``. Secrets never reach W&B: the config is stripped
of secret-named keys, any string equal to a secret-named environment variable's value is
redacted, and W&B's own environment/system capture is switched off.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.confutil import flat_items
from ledgermind.errors import ConfigError, MissingExtraError, first_line
from ledgermind.runs.results import ItemResult

_SECRET_PARTS = frozenset("key apikey token secret password passwd credential credentials auth".split())
REDACTED = "***"


def is_secret_name(name: str) -> bool:
    """``api_key``, ``HF_TOKEN``, ``apiKey``, ``db-password`` are secret; ``max_tokens`` is not."""
    parts = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    return any(p in _SECRET_PARTS for p in parts) or name.lower().replace("_", "") in _SECRET_PARTS


def sanitize(obj: Any, _secrets: Sequence[str] | None = None) -> Any:
    """Copy of a (plain) config without secret-named keys or secret env values anywhere in it."""
    if (secrets := _secrets) is None:  # the values of secret-named environment variables
        secrets = [v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= 4]
    if isinstance(obj, Mapping):
        return {str(k): sanitize(v, secrets) for k, v in obj.items() if not is_secret_name(str(k))}
    if isinstance(obj, list | tuple):
        return [sanitize(v, secrets) for v in obj]
    if isinstance(obj, str):
        for s in secrets:
            obj = obj.replace(s, REDACTED)
    return obj


class ExperimentLogger:
    """No-op logger (``logger=none``) and the interface the W&B logger implements."""

    def start(self, *, out_dir: Path, config: Mapping[str, Any], **run: Any) -> None:
        """Open the run: ``run`` is its ``name``, ``group``, ``job_type`` and optional ``tags``.
        ``config`` must already be plain data; it is sanitised again here."""

    def log_item(self, result: ItemResult, running_accuracy: float) -> None:
        """One finished item (streamed while the run goes)."""

    def log_summary(
        self,
        metrics: Mapping[str, Any],
        results: Sequence[ItemResult],
        details: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """Summary metrics plus the per-item table of the whole run (resumed items included);
        ``details`` maps an id to its ``question``, ``options`` (one ``A. text`` per line), first
        ``image`` (a thumbnail in the table) and raw ``reply``."""

    def log_table3(self, rows: Sequence[Mapping[str, Any]], chart_png: Path | None) -> None:
        """Table 3 as a W&B table, ``table3.csv``'s rows and columns (and the bar chart as an image)."""

    def finish(self) -> None:
        """Close the run and flush its files."""


def configured_logger(node: Any) -> ExperimentLogger:
    """The logger a config's ``logger`` node builds (none: no logging)."""
    from ledgermind.confutil import instantiate

    return instantiate(node, "logger") if node is not None else ExperimentLogger()


# ``logger=none``'s target (conf/logger/none.yaml) and recorded in every run's config: keep the name
NullLogger = ExperimentLogger

# the items table: the result's fields, the item's text (``details``) and its thumbnail
ITEM_COLUMNS = (
    "id thumbnail subject difficulty path question options reply prediction gold correct score "
    "model_calls tool_calls error"
).split()
DETAIL_COLUMNS = ("question", "options", "reply")
THUMBNAIL_SIDE = 160  # px: enough to recognise the item in the table, small enough for thousands of rows


@dataclass
class WandbLogger(ExperimentLogger):
    """``conf/logger/wandb_*.yaml``: Hydra instantiates it with these fields."""

    mode: str = "offline"
    project: str = "ledgermind"
    entity: str | None = None
    tags: Sequence[str] = ()
    group: str | None = None
    job_type: str | None = None

    def __post_init__(self) -> None:
        try:
            import wandb
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise MissingExtraError("W&B logging (or use logger=none)", "wandb", "wandb") from e
        self._wandb = wandb
        self.run: Any = None

    def start(self, *, out_dir: Path, config: Mapping[str, Any], **run: Any) -> None:
        """``logger.group`` / ``logger.job_type`` (configured) win over the run's defaults; tags add up."""
        wb = self._wandb
        job_type = self.job_type or run["job_type"]
        out_dir = Path(out_dir).resolve()
        settings = wb.Settings(
            mode=self.mode,
            silent=True,
            console="off",  # stdout is in the Hydra log already; keep W&B's copy out
            save_code=False,
            disable_git=True,
            x_disable_meta=True,  # no host/env/args capture
            x_disable_stats=True,
            x_disable_machine_info=True,
            x_save_requirements=False,
        )
        try:
            self.run = wb.init(
                project=self.project,
                entity=self.entity,
                dir=str(out_dir),
                name=run["name"],
                group=self.group or run["group"],
                job_type=job_type,
                tags=list(dict.fromkeys([*self.tags, *run.get("tags", ())])),
                # Stable id per output dir: a resumed run continues the same W&B run online.
                id=hashlib.sha1(f"{out_dir}:{job_type}".encode()).hexdigest()[:16],
                resume="allow",
                config=sanitize(dict(config)),
                settings=settings,
                reinit="create_new",
            )
        except Exception as e:
            first = f"{type(e).__name__}: " + first_line(e, "")
            raise ConfigError(
                f"logger={'wandb_' + self.mode}: W&B could not start ({first}); run `wandb login` or set "
                "WANDB_API_KEY, or use logger=wandb_offline / logger=none"
            ) from None

    def log_item(self, result: ItemResult, running_accuracy: float) -> None:
        self.run.log(
            {
                "item/score": result.score,
                "item/model_calls": result.model_calls,
                "item/tokens": result.tokens,
                "item/latency_s": result.latency_s,
                "running/accuracy": running_accuracy,
            }
        )

    def log_summary(
        self,
        metrics: Mapping[str, Any],
        results: Sequence[ItemResult],
        details: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        table = self._wandb.Table(columns=ITEM_COLUMNS)  # type: ignore[arg-type]  # wandb: list[str | int], invariant
        for r in results:
            d = (details or {}).get(r.id, {})
            cells = {c: d.get(c, "") for c in DETAIL_COLUMNS} | {"thumbnail": self._thumbnail(d.get("image"))}
            table.add_data(*(cells[c] if c in cells else getattr(r, c) for c in ITEM_COLUMNS))
        self.run.log({"items": table})
        # by W&B path ({"by_difficulty": {"Easy": {"accuracy": .8}}} → "by_difficulty/Easy/accuracy"),
        # scalars only (a list is no summary value), in one summary record, not one per key
        leaves = flat_items(metrics, "/")
        self.run.summary.update(
            {k: v for k, v in leaves if isinstance(v, int | float | str | bool) or v is None}
        )

    def _thumbnail(self, path: Any) -> Any:
        """A small copy of the item's first image (None when it has none or it cannot be read)."""
        if not path:
            return None
        from PIL import Image

        try:
            with Image.open(path) as im:
                im.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
                return self._wandb.Image(im.convert("RGB"))
        except (OSError, ValueError, Image.DecompressionBombError):
            return None

    def log_table3(self, rows: Sequence[Mapping[str, Any]], chart_png: Path | None) -> None:
        columns = list(rows[0]) if rows else []
        table = self._wandb.Table(columns=columns, data=[[row[c] for c in columns] for row in rows])  # type: ignore[arg-type]  # as above
        payload: dict[str, Any] = {"table3": table}
        if chart_png is not None and Path(chart_png).exists():
            payload["table3_chart"] = self._wandb.Image(str(chart_png))
        self.run.log(payload)

    def finish(self) -> None:
        if self.run is not None:
            self.run.finish()
            self.run = None
