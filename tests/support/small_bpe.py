"""A small byte-level BPE trained in-process, for tests that need a real tokenizer but no files.

``small_tokenizer(markers)`` trains a byte-level BPE (GPT-2's pre-tokenizer) on a corpus built
here in code (English prose, Chinese prose, JSON, Python, shell, Markdown), then adds
``markers`` as special tokens, in order, with the ids right after the trained vocabulary.
Nothing is read from disk or the network, so the tests do not depend on /work/shared.

The same ``vocab_size`` gives the same vocabulary and merges in every process (a test checks
this across hash seeds).  The trained base is cached per ``vocab_size`` and the finished
tokenizer per ``(markers, vocab_size)``; callers share the object, so they must not change its
settings (truncation, padding, ``encode_special_tokens``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from functools import cache

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

__all__ = ["corpus", "small_tokenizer"]

_SEED = 20240521

_ENGLISH_TEXT = (
    "the a an of to in and or but not is are was were be been have has had do does did will "
    "would can could should may might must shall call tool function result value name type "
    "weather city temperature forecast today tomorrow message user assistant system reply "
    "please thank you help question answer think reason step first then finally because "
    "therefore however although search file open read write list string number integer "
    "boolean object array null true false error warning request response server client model "
    "token text chat format render parse stream chunk delta content role arguments json "
    "python code line return value data time date hour minute second price total order "
    "customer product search query page result link image picture color red green blue"
)
_ENGLISH_WORDS = tuple(_ENGLISH_TEXT.split())

_CHINESE_PHRASES = (
    "你好",
    "世界",
    "今天",
    "天气",
    "怎么样",
    "北京",
    "上海",
    "温度",
    "我们",
    "可以",
    "使用",
    "工具",
    "函数",
    "调用",
    "结果",
    "用户",
    "助手",
    "系统",
    "问题",
    "回答",
    "思考",
    "第一步",
    "然后",
    "最后",
    "因为",
    "所以",
    "但是",
    "一只聪明的狐狸",
    "小兔子",
    "森林里",
    "回家的路",
    "朋友",
    "故事",
    "时间",
    "文件",
    "搜索",
    "图片",
    "价格",
    "订单",
)

_CHINESE_PUNCTUATION = ("，", "。", "？", "！", "：", "、")

_PYTHON_SNIPPETS = (
    "def get_weather(city: str, unit: str = 'celsius') -> dict:\n"
    '    """Return the forecast for a city."""\n'
    "    response = client.get(f'/weather/{city}', params={'unit': unit})\n"
    "    response.raise_for_status()\n"
    "    return response.json()\n",
    "for index, item in enumerate(items):\n"
    "    if item is None:\n"
    "        continue\n"
    "    total += item.price * item.quantity\n",
    "class Message:\n"
    "    def __init__(self, role, content):\n"
    "        self.role = role\n"
    "        self.content = content\n"
    "\n"
    "    def __repr__(self):\n"
    "        return f'Message({self.role!r}, {self.content!r})'\n",
    "import json\nimport sys\n\nprint(json.dumps({'ok': True}), file=sys.stderr)\n",
    "try:\n    value = int(text)\n"
    "except ValueError as error:\n    raise RuntimeError(text) from error\n",
)

_OTHER_SNIPPETS = (
    "$ curl -s https://api.example.com/v1/chat/completions -H 'Content-Type: application/json'\n",
    "## Usage\n\n- Install with `pip install pawlette`\n- Run `pawlette demo`\n\n"
    "| a | b |\n|---|---|\n",
    "SELECT name, price FROM products WHERE price > 10 ORDER BY price DESC;\n",
    "const result = await fetch(url, { method: 'POST', body: JSON.stringify(data) });\n",
    "    \n\n\t\t  \r\n",
    "3.14159 2.71828 1,000,000 42 0x1F 1e-9 -17 2024-05-21 12:30:45\n",
    "🙂 😀 🚀 ✨ 👍🏽 café naïve Ünïcödé Ελληνικά русский العربية हिन्दी 日本語 한국어\n",
)


def _english_sentence(rng: random.Random) -> str:
    words = [rng.choice(_ENGLISH_WORDS) for _ in range(rng.randint(4, 14))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice((".", ".", "?", "!", ",", ":"))


def _chinese_sentence(rng: random.Random) -> str:
    parts = [rng.choice(_CHINESE_PHRASES) for _ in range(rng.randint(3, 9))]
    return "".join(parts) + rng.choice(_CHINESE_PUNCTUATION)


def _json_document(rng: random.Random) -> str:
    document = {
        "name": rng.choice(_ENGLISH_WORDS),
        "arguments": {
            "city": rng.choice(("Paris", "北京", "São Paulo", "New York")),
            "days": rng.randint(1, 14),
            "ratio": round(rng.random(), 3),
            "flags": [rng.choice((True, False, None)) for _ in range(rng.randint(0, 3))],
            "note": _english_sentence(rng),
        },
    }
    indent = rng.choice((None, 2))
    return json.dumps(document, ensure_ascii=rng.random() < 0.3, indent=indent)


def corpus() -> Iterator[str]:
    """The training corpus: the same few hundred documents, in the same order, every time."""
    rng = random.Random(_SEED)
    for _ in range(400):
        yield " ".join(_english_sentence(rng) for _ in range(rng.randint(1, 4)))
        yield "".join(_chinese_sentence(rng) for _ in range(rng.randint(1, 3)))
        yield _json_document(rng)
    for _ in range(20):
        yield from _PYTHON_SNIPPETS
        yield from _OTHER_SNIPPETS


@cache
def _trained_json(vocab_size: int) -> str:
    tokenizer = Tokenizer(models.BPE(fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        # All 256 byte characters, so any text encodes without an unknown token.
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    tokenizer.train_from_iterator(corpus(), trainer=trainer)
    return tokenizer.to_str()


@cache
def _small_tokenizer(markers: tuple[str, ...], vocab_size: int) -> Tokenizer:
    tokenizer = Tokenizer.from_str(_trained_json(vocab_size))
    tokenizer.add_special_tokens(
        [
            AddedToken(marker, special=True, normalized=False, lstrip=False, rstrip=False)
            for marker in markers
        ]
    )
    return tokenizer


def small_tokenizer(markers: Sequence[str], *, vocab_size: int = 2000) -> Tokenizer:
    """A byte-level BPE of about ``vocab_size`` tokens with ``markers`` as special tokens.

    The markers get the ids after the trained vocabulary, in the order given.
    """
    ordered = tuple(markers)
    if any(not marker for marker in ordered):
        raise ValueError(f"markers: {ordered!r} has an empty string; expected non-empty markers")
    if len(set(ordered)) != len(ordered):
        raise ValueError(f"markers: {ordered!r} repeats a marker; expected each marker once")
    if vocab_size < 257:
        raise ValueError(f"vocab_size: {vocab_size}; expected at least 257 (256 bytes + 1)")
    return _small_tokenizer(ordered, vocab_size)
