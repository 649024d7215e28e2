"""A tiny random Qwen3 causal LM with a locally trained tokenizer, for offline CPU tests.

``build_tiny_model(directory)`` writes a complete Hugging Face model directory (config, weights,
tokenizer, ChatML chat template) that ``AutoModelForCausalLM`` / ``AutoTokenizer`` and infoppo's
generation backends load like any real checkpoint. Nothing is downloaded. The result is the same
on every call: the tokenizer is trained on fixed text and the weights come from a fixed seed.
"""

from __future__ import annotations

from pathlib import Path

EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|pad|>"
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", EOS_TOKEN, PAD_TOKEN]
SEED = 1234

# A ChatML template in the shape Qwen's tokenizers ship (one user turn + generation prompt).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _training_lines() -> list[str]:
    """Maths-flavoured text so the byte-level BPE learns useful merges (digits, LaTeX, words)."""
    words = ["Solve", "the", "following", "math", "problem", "step", "by", "Answer:", "answer", "is"]
    words += ["Find", "sum", "of", "all", "integers", "such", "that", "Remember", "to", "put", "your"]
    lines = []
    for i in range(600):
        a, b = i % 97, (i * 7) % 113
        lines.append(f"{words[i % len(words)]} {words[(i * 3) % len(words)]} {a} + {b} = {a + b}")
        lines.append(f"\\frac{{{a}}}{{{b + 1}}} and \\boxed{{{a * b}}} so Answer: {a * b}")
        lines.append(f"Let $x^{{{a % 5}}} = {b}$, then $x = \\sqrt{{{b}}}$. The answer is {a - b}.")
    return lines


def _build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_training_lines(), trainer)
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        bos_token=None,
        unk_token=None,
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    return hf_tok


def build_tiny_model(directory: Path, sharpen: float = 1.0) -> Path:
    """Save a tiny random ``Qwen3ForCausalLM`` and its tokenizer into ``directory`` and return it.

    About 140k parameters (2 layers, hidden size 64, vocabulary 1000), eos ``<|im_end|>``, pad
    ``<|pad|>``, a ChatML ``chat_template``; deterministic (fixed training text and seed).
    ``sharpen`` scales the final norm's weight, hence the logits: random weights give a near-uniform
    next-token distribution (entropy ~ ln 1000 everywhere); ``sharpen=8`` spreads entropies over ~0.7-6 nats.
    """
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _build_tokenizer()
    config = Qwen3Config(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        model = Qwen3ForCausalLM(config)
        if sharpen != 1.0:
            with torch.no_grad():
                model.model.norm.weight.mul_(sharpen)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
