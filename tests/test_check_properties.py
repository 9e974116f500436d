"""引用核对的性质测试（hypothesis）：任意输入不崩溃；换一种引用写法结论不变；照抄资料的句子不会被标出。"""
import os
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from sourced_answers.checker import PROBLEM_KINDS, Source, check_answer
from sourced_answers.checker.citations import normalize_citations
from tests.support import NAS_SOURCES, examples

NAS = NAS_SOURCES
SENTENCES = [
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像", "需要转码 4K 视频时选带核显的 Intel 型号",
    "RAID5 至少三块盘，可以容忍一块盘损坏", "RAID5 至少四块盘", "远程访问优先使用 VPN 或 Tailscale",
    "新盘到手先做一次完整的坏道检测", "数据至少保存三份，放在两种不同的介质上", "今天天气很好",
    "The weather in Paris is lovely in spring", "资料提到", "备份要定期做恢复演练",
]
# 一个字偶尔作为“深度保险”：正常运行远远用不到这么久，只用来防止死循环或平方级退化卡住测试
# CI 里用固定的种子（derandomize：每次跑同样的例子，失败了能重现）；本机可以 PROPERTY_EXAMPLES=5000 多跑、换着种子跑
GUARD = settings(deadline=timedelta(seconds=5), max_examples=examples(150),
                 derandomize=bool(os.environ.get("CI")))


def full_width(number):
    return str(number).translate(str.maketrans("0123456789", "０１２３４５６７８９"))


def render(numbers, style):
    """把一组编号按某种写法写出来。"""
    if style == "plain":
        return "".join(f"[{n}]" for n in numbers)
    if style == "spaced":
        return "".join(f"[ {n} ]" for n in numbers)
    if style == "lenticular":
        return "".join(f"【{n}】" for n in numbers)
    if style == "full_width":
        return "".join(f"［{full_width(n)}］" for n in numbers)
    if style == "comma":
        return "[" + ", ".join(map(str, numbers)) + "]"
    if style == "chinese_comma":
        return "[" + "，".join(map(str, numbers)) + "]"
    if style == "footnote":
        return "".join(f"[^{n}]" for n in numbers)
    # range：连续的编号写成 [a-b]
    if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:
        return f"[{numbers[0]}–{numbers[-1]}]"
    return "".join(f"[{n}]" for n in numbers)


STYLES = ["plain", "spaced", "lenticular", "full_width", "comma", "chinese_comma", "footnote", "range"]
citations = st.lists(st.integers(min_value=1, max_value=7), min_size=0, max_size=3, unique=True).map(sorted)
sentence = st.tuples(st.sampled_from(SENTENCES), citations)
answers = st.lists(st.lists(sentence, min_size=1, max_size=3), min_size=1, max_size=4)


def write_answer(paragraphs, styles):
    text = []
    for paragraph in paragraphs:
        parts = []
        for body, numbers in paragraph:
            mark = render(numbers, styles.draw(st.sampled_from(STYLES))) if numbers else ""
            parts.append(f"{body} {mark}。")
        text.append("".join(parts))
    return "\n\n".join(text)


@given(st.text(), st.lists(st.builds(Source, title=st.text(), text=st.text()), max_size=4))
@GUARD
def test_never_crashes_on_arbitrary_unicode(answer, sources):
    report = check_answer(answer, sources)
    # 不问评判模型时，judge_unsupported 之外的任何登记过的种类都可能出现；没登记的种类不能出现
    assert all(p.kind in set(PROBLEM_KINDS) - {"judge_unsupported"} for p in report.problems)


@given(st.lists(st.one_of(st.text(max_size=20), st.sampled_from(
    ["[99999999999999999999]", "[" + "9" * 5000 + "]", "[1-99999999]", "\x1b[31m", "\u202e", "\r", "\x00",
     "【０】", "[^]", "[1,,2]", "<think>", "</think>", "```", "# ", "- ", "：\n"])), max_size=30))
@GUARD
def test_never_crashes_on_control_characters_and_enormous_numbers(pieces):
    report = check_answer("".join(pieces), NAS)
    for problem in report.problems:
        if problem.kind == "missing_source":
            assert problem.citations and not any(1 <= n <= len(NAS) for n in problem.citations)


@given(answers, st.data())
@GUARD
def test_verdict_does_not_depend_on_citation_spelling(paragraphs, data):
    plain = "\n\n".join("".join(f"{body} {render(numbers, 'plain') if numbers else ''}。"
                                for body, numbers in paragraph) for paragraph in paragraphs)
    varied = write_answer(paragraphs, data)
    expected = check_answer(plain, NAS)
    actual = check_answer(varied, NAS)
    assert normalize_citations(varied).replace(" ", "") == plain.replace(" ", "")
    assert actual.passed == expected.passed
    assert actual.unused == expected.unused
    assert [p.to_dict() for p in actual.problems] == [p.to_dict() for p in expected.problems]


source_piece = st.text(alphabet=st.sampled_from(list(
    "硬盘位至少两盘方便做镜像需要转码视频时选带核显的型号远程访问优先使用组网工具三四五十百千万块个年"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ，、%-")), min_size=1, max_size=60)


@given(st.lists(source_piece, min_size=1, max_size=8), st.data())
@GUARD
def test_sentence_copied_verbatim_from_its_source_is_never_flagged(pieces, data):
    sources = [Source(title="资料", text="。".join(pieces) + "。"), Source(title="别的", text="RAID1 是镜像。")]
    copied = data.draw(st.sampled_from(pieces))
    report = check_answer(f"{copied}[1]。", sources)
    assert [p for p in report.problems if p.kind in ("weak_support", "number_mismatch")] == []


@given(st.sampled_from(range(len(NAS))), st.data())
@GUARD
def test_fixture_sentence_copied_verbatim_is_never_flagged(index, data):
    from sourced_answers.checker.source_index import source_sentences
    sentences = [s.rstrip("。") for s in source_sentences(NAS[index].text) if not s.startswith("#")]
    copied = data.draw(st.sampled_from(sentences))
    report = check_answer(f"{copied} [{index + 1}]。", NAS)
    assert [p for p in report.problems if p.kind in ("weak_support", "number_mismatch")] == []


@given(st.text(), st.lists(st.integers(min_value=1, max_value=50), max_size=20))
@GUARD
def test_output_filter_never_lets_a_control_character_through(text, cuts):
    from sourced_answers.checker import TerminalFilter
    from sourced_answers.checker.text import BIDI_CONTROLS
    terminal = TerminalFilter()
    pieces = []
    position = 0
    for cut in cuts + [len(text)]:
        pieces.append(terminal.feed(text[position:position + cut]))
        position += cut
    shown = "".join(pieces)
    assert all(char in "\n\t" or (ord(char) >= 0x20 and not 0x7f <= ord(char) < 0xa0) for char in shown)
    assert not BIDI_CONTROLS & set(shown)


@given(st.text(max_size=40), st.text(max_size=40), st.integers(min_value=0, max_value=30))
@GUARD
def test_key_is_redacted_wherever_the_text_is_split(before, after, cut):
    from sourced_answers.core.safe_output import SafeWriter
    from tests.support import TextSink

    key = "mk-PROPERTY-key-12345"
    text = before + key + after
    sink = TextSink()
    writer = SafeWriter(sink, [key], terminal_safe=False)
    writer.write(text[:cut])
    writer.flush()  # 流式输出每一小段都冲刷：留着的半截密钥不能在这时放出去
    writer.write(text[cut:])
    writer.finish()
    assert key not in sink.text


@given(st.text(alphabet=st.sampled_from(list("硬盘位ＡＢ１２３，。ab AB12'’s  ＲＡＩＤ　-")), max_size=80))
@GUARD
def test_the_fast_paths_read_text_exactly_like_the_slow_ones(text):
    from sourced_answers.checker import seen
    from sourced_answers.checker.reading import read
    from sourced_answers.checker.tokens import token_set, tokens_with_spans
    narrowed = text.translate({code: code - 0xFEE0 for code in range(0xFF10, 0xFF1A)} | {0x3000: 0x20}
                              | {code: code - 0xFEE0 for code in range(0xFF21, 0xFF3B)})
    assert read(text).text == read(narrowed).text == seen(text)
    assert token_set(seen(text)) == {token for token, _, _, _ in tokens_with_spans(seen(text))}


# 有结构的回答：标题（短标题不核对，写成一句话的照样核对）、代码块、引用块、列表（有的由“以下几点 [n]：”、
# “[n] 标题”、缩进在“1. **硬盘** [n]：”下面引出）、照抄的 <source id=…> 标签、不存在的编号、整句重复——
# 句子被过滤、合并、继承引用的地方都在里面
numbers = st.lists(st.integers(min_value=1, max_value=7), max_size=2, unique=True)
ITEM_MARKS = ["- ", "   - ", "1. ", "* "]


def cited(body, chosen):
    return f"{body} {''.join(f'[{n}]' for n in chosen)}".rstrip()


@st.composite
def structured_answers(draw):
    blocks = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        shape = draw(st.sampled_from(["text", "list", "lead_in", "title_line", "nested", "heading", "code", "quote",
                                      "tag", "repeat"]))
        body = draw(st.sampled_from(SENTENCES))
        if shape == "repeat" and blocks:
            blocks.append(blocks[draw(st.integers(min_value=0, max_value=len(blocks) - 1))])
        elif shape in ("list", "lead_in", "title_line", "nested"):
            items = [f"{draw(st.sampled_from(ITEM_MARKS))}{cited(draw(st.sampled_from(SENTENCES)), draw(numbers))}"
                     for _ in range(draw(st.integers(min_value=1, max_value=3)))]
            lead = {"list": "", "lead_in": f"{cited('以下几点', draw(numbers))}：\n\n",
                    "title_line": f"{''.join(f'[{n}]' for n in draw(numbers))} RAID1 和 RAID5 的区别\n",
                    "nested": f"1. **硬盘** {''.join(f'[{n}]' for n in draw(numbers))}：\n"}[shape]
            blocks.append(lead + "\n".join(items))
        elif shape == "heading":
            blocks.append("## " + draw(st.sampled_from(["选购要点", cited(body, draw(numbers)) + "。"])))
        elif shape == "code":
            blocks.append(f"```\n{cited(body, draw(numbers))}。\n```")
        elif shape == "quote":
            blocks.append(f"> {cited(body, draw(numbers))}。")
        elif shape == "tag":
            blocks.append(f'<source id="{draw(st.integers(min_value=1, max_value=7))}">{cited(body, draw(numbers))}。')
        else:
            sentences = [cited(draw(st.sampled_from(SENTENCES)), draw(numbers))
                         for _ in range(draw(st.integers(min_value=1, max_value=3)))]
            twice = draw(st.booleans())
            blocks.append("。".join(sentences + sentences if twice else sentences) + "。")
    return "\n\n".join(blocks)


SENTENCE_KINDS = ("weak_support", "number_mismatch", "cross_language")


@given(structured_answers())
@GUARD
def test_every_problem_index_points_at_the_sentence_it_names(answer):
    """problem.claim 是 --json 的 claims 里的下标：那一项就是问题说的那一句（同一段、同样的文字）。
    说一句话的问题都有下标；没有引用的块不在 claims 里，它的问题没有下标。"""
    from sourced_answers.checker import analyse, problem_places
    from sourced_answers.outputs.records import result_record
    report = check_answer(answer, NAS)
    record = result_record(None, None, answer, NAS, report)
    structure = analyse(answer)
    places = problem_places(structure, report.problems)
    for number, (problem, saved) in enumerate(zip(report.problems, record["problems"], strict=True)):
        assert saved["claim"] == problem.claim
        if problem.kind in SENTENCE_KINDS or (problem.kind == "missing_source" and problem.sentence):
            assert isinstance(problem.claim, int) and not isinstance(problem.claim, bool)
        if problem.kind in ("uncited_paragraph", "empty_answer"):
            assert problem.claim is None
        if problem.claim is not None:
            claim = record["claims"][problem.claim]
            assert (claim["paragraph"], claim["sentence"]) == (problem.paragraph, problem.sentence)
            # 审阅页和改写标出的也正是这一句
            assert any(structure.claims[position].text == problem.sentence for position, flagged in places.items()
                       if number in flagged)


mark_soup = st.lists(st.sampled_from(
    list("[]【】［］0123０１, ，、-–~^ 9a。\n") + ["[1]", "[01]", "[12]", "【2】", "[^3]", "[1,2]", "[ 4 ]"]),
    max_size=16).map("".join)


@given(mark_soup)
@GUARD
def test_text_whose_marks_are_all_plain_is_returned_as_is_and_any_other_is_rewritten_mark_by_mark(text):
    """统一写法的捷径（找不到要统一的标记就原样返回）和逐个标记改写的结果一字不差。"""
    from sourced_answers.checker.citations import CITATION_MARK, normalized_mark

    assert normalize_citations(text) == CITATION_MARK.sub(normalized_mark, text)
