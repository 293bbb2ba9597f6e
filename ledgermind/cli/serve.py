"""Print (or start) the vLLM server for a model config: ``python scripts/serve.py model=NAME [--launch]``.

The command comes from ``conf/model/NAME.yaml`` (``ledgermind/backends/serve_command.py``):
``--max-model-len``, ``--limit-mm-per-prompt``, ``--mm-processor-kwargs`` (the same image-token
budget ``backend=vllm_inprocess`` uses), ``--served-model-name`` (what ``backend=vllm_server``
asks for), ``--gpu-memory-utilization`` and the rest of ``model.vllm_args``. Extra Hydra
overrides work too (``model.vllm_args.max_model_len=16384``).

Examples::

    python scripts/serve.py model=qwen2_5_vl_7b                       # print the command
    python scripts/serve.py model=qwen2_5_vl_7b --port 8001 --launch  # start it (replaces this process)
    CUDA_VISIBLE_DEVICES=1 python scripts/serve.py model=qwen3_vl_8b --port 8002 --launch
    python scripts/serve.py model=qwen2_5_vl_7b --servers 4    # one server per GPU + the client's base_urls
    python scripts/serve.py model=qwen2_5_vl_7b --dp 4         # one data-parallel server over 4 GPUs, one URL

Several servers (``--servers N``): the client routes item-affinely over ``backend.base_urls``
(all calls of an item on one server, the same one in every job of a sweep). One node: ``--dp N`` is the alternative, vLLM's own
data-parallel engine behind a single endpoint (docs/scaling.md compares the two).

Exit codes: 0 printed/launched, 2 unknown model or bad override (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from ledgermind.cli.commands import one_line_errors
from ledgermind.confutil import container
from ledgermind.errors import UserError, first_line


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, at least model=NAME")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--launch", action="store_true", help="start the server instead of printing the command"
    )
    parser.add_argument(
        "--dp", type=int, default=1, help="--data-parallel-size: one server over this many GPUs"
    )
    parser.add_argument(
        "--servers",
        type=int,
        default=1,
        help="print one command per GPU (ports PORT, PORT+1, …) and the client's backend.base_urls",
    )
    args = parser.parse_args(argv)

    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from ledgermind.backends.serve_command import launch_argv, serve_argv
    from ledgermind.cli.run_args import composition_error, hub_model
    from ledgermind.pipeline.config import compose

    if not any(o.startswith("model=") for o in args.overrides):
        raise UserError("name the model: python scripts/serve.py model=NAME (see conf/model/)")
    if args.dp < 1 or args.servers < 1 or (args.servers > 1 and (args.launch or args.dp > 1)):
        raise UserError("--dp and --servers are >= 1; --servers prints commands (no --launch, no --dp)")
    try:
        model = container(compose([x for o in args.overrides for x in hub_model(o)]).model)
        kw = {"host": args.host, "port": args.port, "data_parallel_size": args.dp}
        cmd = launch_argv(model, sys.executable, **kw) if args.launch else serve_argv(model, **kw)
    except (HydraException, OmegaConfBaseException) as e:
        raise UserError(composition_error(e) or first_line(e)) from None
    if args.servers > 1:
        ports = [args.port + i for i in range(args.servers)]
        for gpu, port in enumerate(ports):
            print(f"CUDA_VISIBLE_DEVICES={gpu} {shlex.join(serve_argv(model, host=args.host, port=port))} &")
        print(f"# client: {client_line(args.overrides, [f'http://{args.host}:{p}/v1' for p in ports])}")
        return 0
    if not args.launch:
        print(shlex.join(cmd))
        return 0
    print(f"launching: {shlex.join(cmd)}", file=sys.stderr, flush=True)
    os.execv(cmd[0], cmd)  # the server replaces this process: Ctrl-C / SIGTERM reach it directly


PER_SERVER = 8  # requests in flight per server in the printed client line


def client_line(overrides: list[str], urls: list[str]) -> str:
    """The run command for these servers: the same model overrides (without them the run asks the
    servers for the default model), the URL list, and limits that let every server have
    ``PER_SERVER`` requests in flight (``backend.concurrency``, the total, defaults to 8)."""
    total = PER_SERVER * len(urls)
    return shlex.join(
        [
            "python",
            "scripts/run.py",
            *overrides,
            "backend=vllm_server",
            f"backend.base_urls=[{','.join(urls)}]",
            f"concurrency={total}",
            f"backend.concurrency={total}",
            f"backend.per_server_concurrency={PER_SERVER}",
        ]
    )
