"""A run folder: what is in it, and the one way its JSON and YAML files are read.

One folder per run (a multirun: one per job, ``<sweep dir>/<job>/``). Who writes what:

| file | written by | when |
|---|---|---|
| ``.lock``, ``run_identity.json``, ``.hydra/`` | ``runs.claim`` | once the run holds the folder |
| ``results.jsonl`` (one line per finished item) | ``runs.results.ResultsWriter`` | as each item finishes |
| ``trajectories/<id>.json`` | ``runs.results.ResultsWriter`` (``runs.trajectories`` names it) | before its results line |
| ``wall_time.json`` | ``runs.results.WallClock`` | after each item |
| ``metrics.json`` (accuracy, census, identity) | ``runs.summary.build_metrics`` via the runner | at the end |
| ``responses.sqlite``, ``run.log`` | the response cache, the run's log handler | while it runs |
| ``srfa.jsonl``, ``srfa_metrics.json`` (older: ``audit.*``), ``report/``, ``table3.*``, ``census.md``, ``rescore/`` | S-RFA, the report, Table 3, rescore | later, by readers |

Every writer goes through ``runs.atomic`` (whole files atomically, never through a link). Every
reader goes through ``runs.reader.RunDir``. A folder may be someone else's, so reading is
inert and has one error policy: a run file that cannot be read as JSON or YAML (nested too deep, a
YAML alias, a link out of the folder, a FIFO that a read would wait on forever) is a
``RunFileError`` naming the file and why; a reader that can go on without it catches that error
and says so in one ``note`` line; a missing optional file is ``None``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from ledgermind.backends.cache import RUN_CACHE_FILE
from ledgermind.bounded_read import irregular, read_regular
from ledgermind.errors import DataError, first_line
from ledgermind.jsonl import loads

RESULTS_FILE = "results.jsonl"
WALL_TIME_FILE = "wall_time.json"
TRAJECTORY_DIR = "trajectories"
METRICS_FILE = "metrics.json"
IDENTITY_FILE = "run_identity.json"
LOCK_FILE = ".lock"
RUN_LOG = "run.log"
HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")
RECORDED_CONFIG = Path(".hydra") / "config.yaml"
REPORT_DIR = "report"  # a built report lives inside the run folder; it never holds runs

# Every file and folder a run writes or appends to: none of them may be a link (a link would
# carry a resume's writes, or a reader's reads, out of the folder).
RUN_PATHS = (
    RESULTS_FILE,
    METRICS_FILE,
    IDENTITY_FILE,
    LOCK_FILE,
    ".hydra",
    TRAJECTORY_DIR,
    WALL_TIME_FILE,
    RUN_CACHE_FILE,
    RUN_LOG,
    REPORT_DIR,
)


class RunFileError(DataError):
    """A file of a run folder that cannot be read as what it should be (``reason`` says why, for
    readers that note it and go on): not valid JSON, the wrong shape, or a link out of the folder."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def own_file(root: Path, path: Path) -> Path | None:
    """``path`` when it exists, None when it does not; ``RunFileError`` when, with every link
    followed, it leads out of the run folder ``root`` or is neither a regular file nor a folder.

    A run folder is data someone else may have made: a link in it must not carry a reader's reads
    (or a resume's writes) to a file outside it."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        inside = Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError):  # a link loop
        inside = False
    if not inside:
        raise RunFileError(path, "is a link out of the run folder; not read")
    if not path.is_dir() and (why := irregular(path)):  # a FIFO would be waited on forever
        raise RunFileError(path, f"{why}; not read")
    return path


def note(text: str) -> None:
    """One line on stderr about a record a reader skipped (the run folder is data; it goes on)."""
    print(f"note: {text}", file=sys.stderr, flush=True)


def read_json_file(path: Path) -> Any:
    """A JSON file's value; ``RunFileError`` when it cannot be read (not a regular file, larger than
    ``bounded_read.MAX_FILE_BYTES``), is not valid JSON or nests too deep."""
    try:
        return loads(read_regular(path).decode("utf-8"))
    except json.JSONDecodeError as e:
        raise RunFileError(path, f"not valid JSON ({e.msg})") from None
    except ValueError as e:  # undecodable bytes, or nested too deep
        raise RunFileError(path, f"not valid JSON ({e})") from None
    except OSError as e:
        raise RunFileError(path, f"cannot be read ({e.strerror or e})") from None


class _NoAliasLoader(yaml.SafeLoader):
    """Plain YAML without anchors' aliases: ten lines of nested aliases expand to billions of nodes
    in whoever walks the value, and a config the run wrote (``OmegaConf.to_yaml``) has none."""

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.YAMLError(f"an alias (*) on line {mark.line + 1}; a run's config has none")
        return super().compose_node(parent, index)


def read_yaml(path: Path) -> Any:
    """A YAML file of a run folder as plain data; ``RunFileError`` when it cannot be read (not a
    regular file, too large: ``read_json_file``), is not YAML, or uses an alias."""
    try:
        return parse_yaml(read_regular(path).decode("utf-8"), path)
    except UnicodeDecodeError as e:
        raise RunFileError(path, f"not valid YAML ({e})") from None
    except OSError as e:
        raise RunFileError(path, f"cannot be read ({e.strerror or e})") from None


def parse_yaml(text: str, path: Path = Path("<config>")) -> Any:
    """``read_yaml`` of a text (``path`` names it in the error)."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)
    except yaml.YAMLError as e:
        raise RunFileError(path, f"not valid YAML ({first_line(e)})") from None


def read_json_object(root: Path, path: Path) -> dict[str, Any] | None:
    """A JSON object file of the run folder ``root``: None when it does not exist, ``RunFileError``
    when it is not valid JSON or a link out of the folder (a value that is not an object reads as an
    empty one: the readers only look up keys)."""
    if own_file(root, path) is None:
        return None
    data = read_json_file(path)
    return data if isinstance(data, dict) else {}
