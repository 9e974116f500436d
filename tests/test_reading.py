"""一种读法（checker/reading.py）：每一种伪装读出来都和原样一样；每条规则读的都是这一份。

矩阵：每一种伪装（粗体、HTML 标签、零宽字符、软连字符、双向控制符、汉字间的空格、括号、繁体、别的文字的数字、
上标、HTML 实体、Markdown 链接、终端序列）× 每一条规则（数字、说反了、支持分、太短不判、--fix 的藏起来的检查、
评判模型的提示词、有风险的句子）：伪装过的句子和原样的句子，规则给出一样的结果。
"""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourced_answers.checker import Source, SourceIndexes, SourceTerms, check_answer, risks_in, seen, too_short
from sourced_answers.checker.quantities import quantities_in
from sourced_answers.checker.reading import read
from sourced_answers.steps.hidden import identifying
from sourced_answers.steps.judge import judge_answer
from tests.test_check_properties import GUARD

NAS = [Source(text="RAID5 至少三块盘，可以容忍一块盘损坏，可用容量是总容量减去一块盘。", title="RAID1 和 RAID5 的区别"),
       Source(text="这款四盘位 NAS 售价 2999 元，内置 4GB 内存，可以扩展到 16GB。", title="某四盘位 NAS 评测")]
FLIPPED = "RAID5 至少三块盘，不能容忍一块盘损坏"
PRICED = "这款四盘位 NAS 售价 3999 元，内置 4GB 内存"


def bold(word):
    return f"**{word}**"


# 伪装：(名字, 把 word 写成什么样)。word 是一个否定词、一串数字或一个内容词
DISGUISES = [
    ("粗体", bold),
    ("斜体", lambda word: f"*{word}*"),
    ("HTML 标签", lambda word: f"<b>{word}</b>"),
    ("span 标签", lambda word: f'<span style="color:red">{word}</span>'),
    ("零宽空格", lambda word: "\u200b".join(word)),
    ("零宽连接符", lambda word: "\u200d".join(word)),
    ("软连字符", lambda word: "\u00ad".join(word)),
    ("双向控制符", lambda word: "\u2066" + word + "\u2069"),
    ("BOM", lambda word: "\ufeff".join(word)),
    ("字中间的空格", lambda word: " ".join(word) if not word.isdigit() or len(word) < 4 else word),
    ("行内代码", lambda word: f"`{word}`"),
    ("删除线记号", lambda word: f"~~{word}~~"),
    ("HTML 实体", lambda word: "".join(f"&#x{ord(char):x};" for char in word)),
    ("Markdown 链接", lambda word: f"[{word}](https://example.com/x)"),
    ("终端序列", lambda word: f"\x1b[1m{word}\x1b[0m"),
]
DIGIT_SCRIPTS = [
    ("数学粗体", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗"), ("阿拉伯-印度", "٠١٢٣٤٥٦٧٨٩"), ("天城文", "०१२३४५६७८९"),
    ("全角", "０１２３４５６７８９"), ("孟加拉", "০১২৩৪৫৬৭৮৯"), ("泰文", "๐๑๒๓๔๕๖๗๘๙"),
]


def disguised(text, word, how):
    return text.replace(word, how(word), 1)


def digits_in(text, script):
    return "".join(script[int(char)] if char.isdigit() else char for char in text)


# ---------- 读出来的样子 ----------

@pytest.mark.parametrize("name, how", DISGUISES)
def test_every_disguise_reads_like_the_plain_sentence(name, how):
    for word in ("不能", "3999", "容忍"):
        assert read(disguised(PRICED + "，" + FLIPPED, word, how)).text == read(PRICED + "，" + FLIPPED).text, word


@pytest.mark.parametrize("name, script", DIGIT_SCRIPTS)
def test_digits_of_every_script_read_as_ascii(name, script):
    assert seen(digits_in("售价 3999 元", script)) == seen("售价 3999 元") == "售价3999元"


def test_superscript_digits_are_a_number_an_exponent_or_a_footnote():
    assert seen("售价 ³⁹⁹⁹ 元") == seen("售价³⁹⁹⁹元") == "售价3999元"
    assert seen("面积 20m²，水是 H₂O") == "面积20m²，水是 H₂O"  # 指数、化学式不是数
    assert seen("做 RAID1 镜像¹。") == "做 RAID1 镜像。"  # 脚注记号


def test_traditional_negations_and_numbers_read_as_simplified():
    assert seen("沒有自帶硬盤，兩塊盤，一萬元") == "没有自帶硬盘，两块盘，一万元"
    assert seen("並不適合") == "并不適合"


def test_grouped_digits_read_as_one_number():
    assert seen("2 999 元") == seen("2,999 元") == seen("2'999 元") == seen("2\u202f999 元") == "2999元"
    assert seen("3, 4, 5 盘位") == "3, 4, 5盘位"  # 逗号后面有空格的是几个数


def test_a_negation_in_brackets_reads_as_the_negation():
    assert seen("（不）能容忍") == seen("(不)能容忍") == "不能容忍"
    assert seen("（见下表）能容忍") == "（见下表）能容忍"


def test_multiplication_and_names_keep_their_signs():
    assert seen("3 * 4 = 12，3*4 = 12") == "3 * 4 = 12，3*4 = 12"
    assert seen("调用 snake_case 函数") == "调用 snake_case 函数"


def test_plain_text_comes_back_unchanged():
    text = "RAID5 至少三块盘，可以容忍一块盘损坏。"
    assert read(text).text == text and read(text).segments == ()


def test_messages_quote_what_the_user_wrote():
    reading = read("RAID5 至少三块盘，**不**能容忍一块盘损坏")
    start = reading.text.index("不能容忍")
    assert reading.origin_span(start, start + 4) == "**不**能容忍"


@given(st.text(alphabet=st.sampled_from(list("不能容忍 *_`<b>/&#x4e0d;\u200b３𝟑٣2 999,RAID盘")), max_size=60))
@GUARD
def test_every_read_character_maps_back_into_the_original(text):
    reading = read(text)
    last = -1
    for position in range(len(reading.text)):
        origin = reading.origin(position)
        assert 0 <= origin < len(reading.original) and origin >= last  # 位置单调、落在原文里
        last = origin


# ---------- 每一种伪装 × 每一条规则 ----------

@pytest.mark.parametrize("name, how", DISGUISES)
def test_numbers_read_every_disguise(name, how):
    assert quantities_in(seen(disguised(PRICED, "3999", how)), claim=True) == quantities_in(seen(PRICED), claim=True)


@pytest.mark.parametrize("name, script", DIGIT_SCRIPTS)
def test_a_wrong_price_in_another_script_is_a_number_mismatch(name, script):
    answer = digits_in(PRICED, script) + " [2]。"
    assert "number_mismatch" in {p.kind for p in check_answer(answer, NAS).problems}


@pytest.mark.parametrize("name, how", DISGUISES)
def test_polarity_reads_every_disguise(name, how):
    for negation in ("不", "不能"):
        report = check_answer(disguised(FLIPPED, negation, how) + " [1]。", NAS)
        assert report.claims[0].contradicts and [p.kind for p in report.problems] == ["polarity_mismatch"]


@pytest.mark.parametrize("name, how", DISGUISES)
def test_the_verdict_and_score_read_every_disguise(name, how):
    plain = check_answer(FLIPPED + " [1]。", NAS)
    hidden = check_answer(disguised(FLIPPED, "不能", how) + " [1]。", NAS)
    assert plain.claims[0].contradicts and hidden.claims[0].contradicts
    assert [(c.score, c.status) for c in hidden.claims] == [(c.score, c.status) for c in plain.claims]
    assert {p.kind for p in hidden.problems} == {p.kind for p in plain.problems}
    invented = "RAID5 至少三块盘，可以同时容忍所有的盘一起损坏，数据永远不会丢"
    assert not check_answer(disguised(invented, "所有", how) + " [1]。", NAS).passed


@pytest.mark.parametrize("name, how", DISGUISES)
def test_too_short_reads_every_disguise(name, how):
    assert too_short(seen(how("是的"))) and not too_short(seen(disguised(FLIPPED, "容忍", how)))


@pytest.mark.parametrize("name, how", DISGUISES)
def test_the_hidden_claim_check_reads_every_disguise(name, how):
    indexes = SourceIndexes(NAS)
    invented = "群晖的系统比威联通稳定得多"
    assert identifying(disguised(invented, "威联通", how), indexes) == identifying(invented, indexes)


@pytest.mark.parametrize("name, how", DISGUISES)
def test_the_risky_claims_read_every_disguise(name, how):
    terms = [SourceTerms(seen(NAS[1].text))]
    assert risks_in(seen(disguised(PRICED, "3999", how)), terms) == risks_in(seen(PRICED), terms)


@pytest.mark.parametrize("name, how", DISGUISES)
def test_the_judge_is_asked_the_sentence_as_read(name, how):
    asked = []

    def ask(messages):
        asked.append(messages[0]["content"])
        return "否"
    answer = disguised("RAID5 的可用容量是总容量减去一块盘", "容量", how) + " [1]。"
    judge_answer(NAS, check_answer(answer, NAS), ask, "judge", "all")
    [prompt] = asked
    assert "RAID5 的可用容量是总容量减去一块盘" in prompt and "\u200b" not in prompt and "<b>" not in prompt
