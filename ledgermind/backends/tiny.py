"""A tiny random-weight Qwen2-VL checkpoint, built offline in seconds, for tests and CI.

Why: the serving path (processor, chat template, image tokens, vLLM, structured output) must be
exercised for real without downloading gigabytes. A 2-layer, 64-wide ``Qwen2VLForConditionalGeneration``
with a tiny vision tower and a locally trained byte-level BPE tokenizer has the exact same
architecture and file layout as ``Qwen/Qwen2-VL-2B-Instruct``, so vLLM and transformers load it
through their normal code paths. Its outputs are meaningless but deterministic, which is all a
parity or plumbing test needs.

The build is idempotent: a finished checkpoint carries a marker file recording the build
parameters; a directory with a matching marker is reused as is.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from ledgermind.confutil import cache_root

BUILD_VERSION = 1  # bump when the recipe changes, so stale caches are rebuilt
_MARKER = "ledgermind_tiny.json"

# Every special token of Qwen2-VL's tokenizer, in the official order (ids follow the BPE vocab).
QWEN2_VL_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

# The chat template shipped with Qwen/Qwen2-VL-*-Instruct (verbatim semantics): a default system
# prompt, ``<|vision_start|><|image_pad|><|vision_end|>`` per image, ``<|im_start|>assistant`` prompt.
QWEN2_VL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# Training text for the BPE merges: enough English, digits and JSON punctuation that prompts and
# structured outputs tokenize into a reasonable number of tokens.
_BPE_CORPUS = (
    "The quick brown fox jumps over the lazy dog. What is shown in the image? Answer with one word. "
    "Read the text in the chart and report the value. The answer is 42. Total revenue was 3.5 million "
    "in 2021 and 4.75 million in 2022. Question: which year had the highest value? "
    '{"answer": "yes", "confidence": 0.9, "claims": ["a", "b"]} [1, 2, 3] true false null '
    "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,;:!?'\"()[]{}<>-_/\\+=*&%$#@ "
)


@dataclass(frozen=True)
class TinySpec:
    """Build parameters; part of the cache marker, so changing any of them rebuilds."""

    seed: int = 0
    bpe_vocab_size: int = 512
    text_layers: int = 2
    hidden: int = 64
    heads: int = 2
    intermediate: int = 128
    vision_depth: int = 1
    vision_embed_dim: int = 32
    vision_heads: int = 2
    init_range: float = 0.2  # larger than the usual 0.02 so greedy argmax is decisive (stable parity)
    # image budget: each visual token covers 28x28 px; 4..16 tokens per image keeps prompts short
    min_pixels: int = 28 * 28 * 4
    max_pixels: int = 28 * 28 * 16
    max_position_embeddings: int = 4096
    version: int = BUILD_VERSION


def tiny_model_dir() -> Path:
    return cache_root() / "tiny-qwen2-vl"


def build_tiny_qwen2_vl(out_dir: str | Path | None = None, spec: TinySpec = TinySpec()) -> Path:
    """Build (or reuse) the tiny checkpoint in ``out_dir`` and return its path.

    Built in a sibling temp dir and renamed into place, so a crash or a concurrent builder never
    leaves a half-written checkpoint that looks finished.
    """
    out = Path(out_dir) if out_dir is not None else tiny_model_dir()
    if _is_built(out, spec):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tiny-build-", dir=out.parent))
    try:
        tokenizer = _build_tokenizer(spec)
        tokenizer.save_pretrained(tmp)
        _build_model(tmp, spec, tokenizer)
        _write_processor_configs(tmp, spec)
        (tmp / _MARKER).write_text(json.dumps(asdict(spec), indent=1))
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except OSError:
        if _is_built(out, spec):  # another process won the race
            return out
        raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _is_built(path: Path, spec: TinySpec) -> bool:
    marker = path / _MARKER
    try:
        return json.loads(marker.read_text()) == asdict(spec)
    except (OSError, ValueError):
        return False


def _build_tokenizer(spec: TinySpec):  # -> PreTrainedTokenizerFast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=spec.bpe_vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte is encodable
        show_progress=False,
    )
    tok.train_from_iterator([_BPE_CORPUS] * 4, trainer=trainer)
    tok.add_special_tokens(list(QWEN2_VL_SPECIAL_TOKENS))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        model_max_length=spec.max_position_embeddings,
    )
    fast.chat_template = QWEN2_VL_CHAT_TEMPLATE
    return fast


def _build_model(out: Path, spec: TinySpec, tokenizer) -> None:
    import torch
    from transformers import GenerationConfig, Qwen2VLConfig, Qwen2VLForConditionalGeneration

    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN2_VL_SPECIAL_TOKENS}
    vocab = len(tokenizer)  # no padding rows: every id the model can emit must be decodable
    head_dim = spec.hidden // spec.heads
    quarter = head_dim // 4  # mrope splits head_dim/2 rotary freqs over (t, h, w)
    config = Qwen2VLConfig(
        text_config=dict(
            vocab_size=vocab,
            hidden_size=spec.hidden,
            intermediate_size=spec.intermediate,
            num_hidden_layers=spec.text_layers,
            num_attention_heads=spec.heads,
            num_key_value_heads=spec.heads,
            max_position_embeddings=spec.max_position_embeddings,
            initializer_range=spec.init_range,
            rope_parameters={
                "rope_type": "mrope",
                "mrope_section": [head_dim // 2 - 2 * quarter, quarter, quarter],
                "rope_theta": 1_000_000.0,
            },
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=ids["<|im_end|>"],
            pad_token_id=ids["<|endoftext|>"],
            tie_word_embeddings=False,
        ),
        vision_config=dict(
            depth=spec.vision_depth,
            embed_dim=spec.vision_embed_dim,
            hidden_size=spec.hidden,  # the merger projects into the text width
            num_heads=spec.vision_heads,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            initializer_range=spec.init_range,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(spec.seed)
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.save_pretrained(out, safe_serialization=True)
    GenerationConfig(
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
        pad_token_id=ids["<|endoftext|>"],
        do_sample=False,
    ).save_pretrained(out)


def _write_processor_configs(out: Path, spec: TinySpec) -> None:
    """Image/video processor + processor configs in the layout of the official Qwen2-VL repos."""
    image_cfg = {
        "image_processor_type": "Qwen2VLImageProcessor",
        "processor_class": "Qwen2VLProcessor",
        "do_resize": True,
        "do_rescale": True,
        "do_normalize": True,
        "do_convert_rgb": True,
        "rescale_factor": 1 / 255,
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "patch_size": 14,
        "temporal_patch_size": 2,
        "merge_size": 2,
        "min_pixels": spec.min_pixels,
        "max_pixels": spec.max_pixels,
        "size": {"shortest_edge": spec.min_pixels, "longest_edge": spec.max_pixels},
    }
    (out / "preprocessor_config.json").write_text(json.dumps(image_cfg, indent=1))
    video_cfg = dict(image_cfg, video_processor_type="Qwen2VLVideoProcessor")
    del video_cfg["image_processor_type"]
    (out / "video_preprocessor_config.json").write_text(json.dumps(video_cfg, indent=1))
    (out / "chat_template.json").write_text(json.dumps({"chat_template": QWEN2_VL_CHAT_TEMPLATE}))
    (out / "processor_config.json").write_text(json.dumps({"processor_class": "Qwen2VLProcessor"}))
