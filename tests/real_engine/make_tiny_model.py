"""Make a tiny random-init Llama model that a real vLLM engine can serve, with nothing downloaded.

    python make_tiny_model.py OUT_DIR

Writes into OUT_DIR (created if missing): config.json, generation_config.json,
model.safetensors (bf16), tokenizer.json, tokenizer_config.json (with a chat template) and
special_tokens_map.json where the installed transformers writes one. The weights are random, so
the model's text is gibberish; the point is a real architecture, real weight files and a real
tokenizer, served end to end (vLLM's own model loader, tokenizer, chat template and sampler).

Deterministic: the same transformers/tokenizers/torch versions give byte-identical files (the
tokenizer is trained on the text in this file, the weights come from a fixed seed). Run it with the
python of the venv made by tools/vllm-cpu/setup-env.sh (it has torch, transformers, tokenizers).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SEED = 0
VOCAB_SIZE = 1024  # the tokenizer is trained up to this; the model's embedding has exactly this
BOS, EOS, UNK, PAD = "<|bos|>", "<|eos|>", "<|unk|>", "<|pad|>"
ROLE_TOKENS = ["<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>"]
SPECIAL_TOKENS = [BOS, EOS, UNK, PAD, *ROLE_TOKENS]

# A plain template: each message as <|role|>content<|end|>, and <|assistant|> to prompt a reply.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)

MODEL_SHAPE = dict(
    hidden_size=128,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,  # grouped-query attention, head_dim 32
    head_dim=32,
    max_position_embeddings=4096,
    rms_norm_eps=1e-5,
    tie_word_embeddings=False,
)

_TEXT = """\
A spark file names a model, the engine that serves it and the machines it runs on. The compiler
checks the spec and writes the deployment files: a serve script, a Slurm job, Kubernetes
manifests or a Compose file. Every flag it writes is one the engine accepts. The engine loads the
weights, builds the tokenizer, reads the chat template and answers requests over HTTP: health,
models, completions and chat completions. A router in front of two engines sends the prompt to a
prefill server and the decode to another. Tests start a real server on this machine with a tiny
model made by a script, ask it a question and check the answer comes back with status two hundred.
The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow.
Hello, world. Hi there! What is your name? My name is tiny. How are you today? I am fine, thanks.
What can you do? I can say words, in no useful order, very fast, on a small computer.
"""


def corpus() -> list[str]:
    """The training text: the paragraph above, numbers, and the chat markers in context."""
    lines = _TEXT.splitlines()
    lines += [" ".join(str(n) for n in range(i, i + 50)) for i in range(0, 1000, 50)]
    lines += ["abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?'\"()[]{}<>/\\-_+=*&^%$#@~`|"]
    return lines


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=UNK))
    # Byte-level: any input text encodes (no unknown characters), like GPT-2/Llama-3 tokenizers.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=1,
        special_tokens=SPECIAL_TOKENS,  # ids 0.. in this order
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    if tok.get_vocab_size() > VOCAB_SIZE:
        raise SystemExit(f"tokenizer has {tok.get_vocab_size()} tokens, more than {VOCAB_SIZE}")
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=PAD,
        additional_special_tokens=ROLE_TOKENS,
        chat_template=CHAT_TEMPLATE,
        model_max_length=MODEL_SHAPE["max_position_embeddings"],
        clean_up_tokenization_spaces=False,
    )


def build_model(tokenizer):
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    ids = {name: tokenizer.convert_tokens_to_ids(tok) for name, tok in (("bos", BOS), ("eos", EOS), ("pad", PAD))}
    config = LlamaConfig(
        vocab_size=VOCAB_SIZE,
        bos_token_id=ids["bos"],
        eos_token_id=ids["eos"],
        pad_token_id=ids["pad"],
        hidden_act="silu",
        initializer_range=0.02,
        **MODEL_SHAPE,
    )
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    model.generation_config = GenerationConfig(
        bos_token_id=ids["bos"], eos_token_id=ids["eos"], pad_token_id=ids["pad"]
    )
    return model


def _embed_chat_template(out: Path) -> None:
    """Keep the chat template inside tokenizer_config.json (newer transformers write a separate
    chat_template.jinja instead; both are read by vLLM, one place is simpler to inspect)."""
    cfg_path = out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    jinja = out / "chat_template.jinja"
    if jinja.exists():
        jinja.unlink()
    cfg["chat_template"] = CHAT_TEMPLATE
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)

    tokenizer = build_tokenizer()
    model = build_model(tokenizer)
    model.save_pretrained(out)  # model.safetensors (bf16), config.json, generation_config.json
    tokenizer.save_pretrained(out)
    _embed_chat_template(out)

    # Read back what was written, as a server would.
    from transformers import AutoConfig, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(out)
    cfg = AutoConfig.from_pretrained(out)
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "Hello, world."}], tokenize=False, add_generation_prompt=True
    )
    assert prompt == "<|bos|><|user|>Hello, world.<|end|><|assistant|>", prompt
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"wrote {out}: {cfg.model_type}, {n_params:,} parameters, dtype {cfg.dtype}, "
        f"vocab {cfg.vocab_size} (tokenizer {len(tok)}), head_dim {cfg.head_dim}, "
        f"max_position_embeddings {cfg.max_position_embeddings}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
