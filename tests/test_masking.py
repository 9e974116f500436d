"""密钥：环境里本程序认得的每个密钥（core.secrets.secrets_to_mask）在任何输出里都遮掉，密钥里是什么字符都一样，
被回显时每两个字之间夹着看不见的字符（零宽空格、软连字符、别的格式字符、组合附加符号）也一样；遮的时间和文字的
长度成线性（基准在 bench/benchmark_masking.py）。发出去之前，边界（core.secrets.check_secret）拒绝中间有空白、
控制字符或者长过 MAX_KEY_LENGTH 的密钥：一次请求也不发。每个入口都试：主命令、metaso_search.py、quickstart_command、
Dask 任务。"""
import html
import io
import json
import random
import re
import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fake_metaso import FakeMetaso
from sourced_answers.checker import seen
from sourced_answers.core.errors import MetasoError, ModelError
from sourced_answers.core.masking import REDACTED, json_unescaped, mask, mask_data, masked_error, masked_json
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.secrets import secrets_to_mask
from sourced_answers.core.settings import MAX_KEY_LENGTH, CheckSettings
from tests.support import GOOD_ANSWER, HERE, NAS_RECORD_SOURCES, cli_env, examples, run_cli

QUESTION = "家用 NAS 怎么选"
MODEL_KEY = "sk-MODEL-CANARY-0123456789"
METASO_KEY = "mk-METASO-CANARY-0123456789abcdef"
# 夹在密钥中间时看不见（或者只是叠在前一个字上）的字符
HIDDEN_CHARS = ["\u200b", "\u00ad", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e", "\u034f", "\u0301", "\ufe0f",
                "\u202e", "\u2066", "\U000e0041", "\U000e0100", "\x00", "\x1b", "\n", "\u2028", "\u115f", "\u3164"]


def without_hidden(text):
    """参照的做法（和实现无关）：按 unicodedata 的类别去掉控制、格式、组合附加符号、分隔符，再去掉几个空白字母。"""
    return "".join(char for char in text if unicodedata.category(char) not in ("Cc", "Cf", "Mn", "Me", "Zl", "Zp", "Cs")
                   and char not in "\u115f\u1160\u3164\uffa0\u2800")


def shows(text, *keys):
    """看输出的人认得出其中某个密钥吗：去掉看不见的字符以后还找得到它。"""
    visible = without_hidden(text)
    return any(key in visible for key in keys)


def interleaved(key, separator):
    return separator.join(key)


keys = st.text(alphabet=string.ascii_letters + string.digits + "-_.~+/=\"'\\&<>", min_size=16, max_size=64)
hidden = st.sampled_from(HIDDEN_CHARS)
surroundings = st.text(alphabet="家用 NAS 怎么选，RAID1。\n" + string.ascii_letters, max_size=40)


@settings(deadline=None)  # 机器忙时一个例子也可能超过 200 ms：这里量的不是速度
@given(key=keys, around=st.tuples(surroundings, surroundings), data=st.data())
def test_a_key_with_invisible_characters_between_its_letters_is_masked(key, around, data):
    """每两个字之间随机夹上零个或几个看不见的字符：看起来还是那个密钥，就得遮掉。"""
    pieces = [key[0]]
    for char in key[1:]:
        pieces += data.draw(st.lists(hidden, max_size=2)) + [char]
    text = around[0] + "".join(pieces) + around[1]
    masked = mask(text, [key])
    assert not shows(masked, key) and REDACTED in masked


def reference_mask(text, keys, hidden_chars):
    """慢而直白的参照：去掉看不见的字符，标出每个密钥出现过（包括互相重叠）的每个字，连着的标记换成一个 mk-***，
    看不见的字符夹在被遮的两段之间时一起遮掉。"""
    visible = [index for index, char in enumerate(text) if char not in hidden_chars]
    shown = "".join(text[index] for index in visible)
    covered = [False] * len(shown)
    for key in keys:
        for start in range(len(shown) - len(key) + 1):
            if shown.startswith(key, start):
                covered[start:start + len(key)] = [True] * len(key)
    pieces, position, index = [], 0, 0
    while index < len(shown):
        if not covered[index]:
            index += 1
            continue
        end = index
        while end < len(shown) and covered[end]:
            end += 1
        pieces += [text[position:visible[index]], REDACTED]
        position = visible[end - 1] + 1
        index = end
    return "".join(pieces) + text[position:]


def test_masking_agrees_with_a_plain_reference_on_random_text():
    """小字母表上的随机文字和密钥（密钥互相重叠、自己和自己重叠、夹着看不见的字符）：和参照逐字相同。"""
    rng = random.Random(30)
    for _ in range(examples(20000)):
        secrets = ["".join(rng.choice("ab") for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 3))]
        text = "".join(rng.choice("abc\u200b\u00ad\u0301\n") for _ in range(rng.randint(0, 30)))
        assert mask(text, secrets) == reference_mask(text, secrets, "\u200b\u00ad\u0301\n"), (text, secrets)


def test_two_overlapping_keys_leave_no_tail():
    first, second = "sk-AAAA-1111-BBBB", "BBBB-2222-CCCC-3333"
    for text in ("sk-AAAA-1111-BBBB-2222-CCCC-3333", "sk-AAAA-1111-BBBB\u200b-2222-CCCC-3333"):
        masked = mask(f"调试：{text} 完", [first, second])
        assert masked == f"调试：{REDACTED} 完"


def test_a_key_repeated_back_to_back_is_masked_whole():
    key = "abcdefghijklmnoa"  # 开头和结尾是同一个字：两次出现共用一个字
    assert mask(key + key[1:], [key]) == REDACTED
    assert mask("x" + key * 3 + "y", [key]) == f"x{REDACTED}y"


def test_masking_before_encoding_catches_characters_that_encoding_changes():
    key = 'mk-"quote\\back&amp<lt>\'apos'
    record = {"answer": f"回显 {key}", "sources": [{"text": "\u200b".join(key)}], key: 1}
    encoded = masked_json(record, [key])
    assert key not in json.loads(encoded) and not shows(json.dumps(json.loads(encoded), ensure_ascii=False), key)
    assert mask_data(record, [key])["answer"] == f"回显 {REDACTED}"


def test_a_key_anywhere_in_a_large_record_is_masked_and_a_record_without_one_is_left_as_it_is():
    """长回答的记录有几十万个字符串：先连起来粗查一遍，没有密钥的开头就原样返回（同一个对象）；有的话，藏在多深、
    在键里、元组里、夹着零宽空格、写成转义，都照样遮掉。"""
    key = "mk-CANARY-0123456789abcdef"
    clean = {"claims": [{"evidence": [{"text": f"第 {n} 段", "start": n}], "unmatched": []} for n in range(20_000)]}
    assert mask_data(clean, [key]) is clean
    hidden_ways = [key, "\u200b".join(key), "\\u006d" + key[1:], " ".join(key), "\x1b[31m".join(key),
                   "\n".join(key), "\x07".join(key)]
    for way in hidden_ways:
        record = {"claims": [{"evidence": [{"text": "前面", "start": 1}]} for _ in range(50)]
                  + [{"deep": [("元组", [{f"键 {way}": way}])]}]}
        encoded = masked_json(record, [key])
        assert not shows(encoded, key) and REDACTED in encoded, way


@settings(max_examples=examples(60), deadline=None)
@given(separator=hidden, cuts=st.lists(st.integers(1, 9), min_size=1, max_size=40), terminal=st.booleans())
def test_a_streamed_key_with_invisible_characters_is_masked_whatever_the_chunks(separator, cuts, terminal):
    """流式输出按任意长度切开（一个密钥跨好几段、看不见的字符刚好在切口上）：照样遮掉。"""
    echoed = f"回显 {interleaved(MODEL_KEY, separator)} 完"
    sink = io.StringIO()
    writer = SafeWriter(sink, [MODEL_KEY], terminal_safe=terminal)
    position, turn = 0, 0
    while position < len(echoed):
        size = cuts[turn % len(cuts)]
        writer.write(echoed[position:position + size])
        writer.flush()
        position, turn = position + size, turn + 1
    writer.finish()
    assert not shows(sink.getvalue(), MODEL_KEY)
    if not (terminal and separator == "\x1b"):  # 终端上 ESC 连同后面的一个字被当作控制序列去掉：密钥已经不成样子
        assert REDACTED in sink.getvalue()


def test_a_key_that_is_mostly_invisible_is_too_short_to_mask_with():
    """密钥长短按看得见的字算：夹着一串零宽字符的两个字母不拿来遮（会把文字里每个“ab”都遮掉）。"""
    assert secrets_to_mask({"ANS_API_KEY": "\u200b" * 20 + "ab"}) == ()
    assert secrets_to_mask({"ANS_API_KEY": "sk-\u200bmodel-key"}) == ("sk-\u200bmodel-key",)
    assert mask("回显 sk-model-key", secrets_to_mask({"ANS_API_KEY": "sk-\u200bmodel-key"})) == f"回显 {REDACTED}"


# 夹在密钥中间、去掉之后还是那个密钥的东西：看不见的字符，也有空格、终端控制序列、literal 写出的转义
SEPARATORS = ["\u200b", "\u00ad", "\u2060", "\u034f", "\U000e0041", "\u0301", " ", "\x1b[1m", "\x1b]8;;http://x\x07",
              "\\u200b", "\n", "\t"]


@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_key_split_by_spaces_terminal_sequences_or_written_escapes_is_masked(separator):
    text = f"回显 {separator.join(MODEL_KEY)} 完"
    assert mask(text, [MODEL_KEY]) == f"回显 {REDACTED} 完"


@pytest.mark.parametrize("escape", ["\\u{:04x}", "\\u{:04X}", "\\x{:02x}", "\\U{:08x}"])
def test_a_key_written_as_escapes_is_masked(escape):
    written = "".join(escape.format(ord(char)) for char in MODEL_KEY)
    assert mask(f'{{"k": "{written}"}}', [MODEL_KEY]) == f'{{"k": "{REDACTED}"}}'


def test_a_key_with_its_own_backslash_is_still_masked():
    key = "mk-back\\slash\\n-0123456789"
    assert mask(f"回显 {key} 完", [key]) == f"回显 {REDACTED} 完"


def test_a_terminal_sequence_that_ends_in_a_letter_of_the_key_does_not_hide_it():
    """\x9b 后面的 m 可以是控制序列的结尾，也可以是密钥的第一个字：两种看法都找。"""
    key = "mk-PROPERTY-key-12345"
    assert key not in mask("\x9b" + key, [key]) and key not in mask("\x1b" + key, [key])


# ---------- 渲染出来读者看到的：HTML 实体、标签、Markdown 记号、全角字母 ----------

def rendered_reading(text):
    """参照（和实现无关的直白做法）：Markdown、HTML 渲染出来以后读者读到的字——去掉注释、标签、链接的网址和转义
    标点的反斜杠，解开 HTML 实体，NFKC（全角、数学字母、连字换成 ASCII），去掉 Markdown 的记号（* _ ~ ` 和方括号）、
    看不见的字符和空白。"""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"</?[A-Za-z][^<>]*>", "", text)
    text = re.sub(r"\]\([^()\s]*\)", "", text)  # 链接只显示方括号里的字
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)  # 转义标点的反斜杠不显示
    text = unicodedata.normalize("NFKC", html.unescape(text))
    return "".join(char for char in without_hidden(text) if char not in "*_~`[]" and not char.isspace())


def reveals(output, key):
    """读输出的人认得出这个密钥吗：渲染一遍（审阅页这样本身是 HTML 的输出再渲染一遍）以后找得到它。"""
    return rendered_reading(key) in rendered_reading(rendered_reading(output))


def entity(char, style="dec"):
    return {"dec": f"&#{ord(char)};", "hex": f"&#x{ord(char):x};", "HEX": f"&#X{ord(char):X};",
            "padded": f"&#0000{ord(char)};"}[style]


def full_width(text):
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


KEY_AS_RENDERED = "sk-model-secret-0001"
# 每一种写法，读者在聊天程序、网页里看到的都是 sk-model-secret-0001
DISGUISES = {
    "十进制实体": "sk-&#109;odel-secret-0001", "十六进制实体": "sk-&#x6d;odel-secret-0001",
    "大写的十六进制实体": "sk-&#X6D;odel-secret-0001", "补零的实体": "sk-&#00000000000109;odel-secret-0001",
    "不带分号的实体": "sk-&#109odel-secret-0001", "开头的字是实体": "&#115;k-model-secret-0001",
    "每个字都是实体": "".join(entity(char) for char in KEY_AS_RENDERED),
    "夹着空标签": "sk-mo<b></b>del-secret-0001", "夹着带属性的标签": 'sk-mo<span class="x">del</span>-secret-0001',
    "夹着注释": "sk-mo<!-- 注释 -->del-secret-0001", "夹着 <wbr>": "sk-model-<wbr>secret-0001",
    "斜体": "sk-model-*secret*-0001", "粗体": "sk-model-**secret**-0001", "下划线": "sk-model-_secret_-0001",
    "删除线": "sk-model-~~secret~~-0001", "行内代码": "sk-model-`secret`-0001",
    "整个是全角": full_width(KEY_AS_RENDERED), "开头是全角": "ｓｋ－model-secret-0001",
    "数学粗体": "𝐬𝐤-model-secret-0001", "链接": "[sk-mo](http://x.example)del-secret-0001",
    "转义的标点": "sk\\-model\\-secret\\-0001", "实体写的零宽空格": "sk-model-se&#8203;cret-0001",
    "软连字符实体": "sk-model-se&shy;cret-0001", "全角的星号": "sk-model-＊secret＊-0001",
}


@pytest.mark.parametrize("written", DISGUISES.values(), ids=DISGUISES.keys())
def test_a_key_written_so_a_renderer_shows_it_is_masked_with_everything_inside(written):
    """模型把密钥写成渲染出来才看得到的样子：遮掉原文里的整段（连同夹在里面的实体、标签、记号），前后的字不动。"""
    assert reveals(f"回显 {written} 完", KEY_AS_RENDERED)
    masked = mask(f"回显 {written} 完", [KEY_AS_RENDERED])
    assert masked in (f"回显 {REDACTED} 完", f"回显 [{REDACTED} 完")  # 链接：方括号在密钥之前
    assert not reveals(masked, KEY_AS_RENDERED)


@pytest.mark.parametrize("written", DISGUISES.values(), ids=DISGUISES.keys())
def test_masking_hides_every_key_the_checkers_own_reading_finds(written):
    """核对读句子用的那一份读法（checker.seen：解开实体、去掉标签和强调记号），再加上 NFKC：它读得出密钥的地方，
    遮过以后它就读不出了。遮密钥的读法比它宽（不带分号的实体、补零的实体、注释也认），不会比它窄。"""
    text = f"回显 {written} 完"
    masked = mask(text, [KEY_AS_RENDERED])
    assert KEY_AS_RENDERED not in unicodedata.normalize("NFKC", seen(masked))
    assert REDACTED in masked


def test_markup_without_a_key_is_left_as_it_is():
    text = "**RAID1** 用两块盘 &amp; <b>镜像</b>，ｓｋ－ 不是密钥，sk-model 也不是 *全部*。"
    assert mask(text, [KEY_AS_RENDERED]) == text


def test_a_key_that_is_mostly_markup_does_not_mask_ordinary_words():
    """密钥几乎全是 * _：渲染出来只剩几个字母，拿它去找会遮掉正常的文字，所以渲染出来的看法不用它。"""
    key = "__________abc"
    assert mask("abc 和 a_b_c 都是正常的字", [key]) == "abc 和 a_b_c 都是正常的字"
    assert mask(f"回显 {key} 完", [key]) == f"回显 {REDACTED} 完"


def test_a_key_with_its_own_markdown_marks_is_found_however_they_are_rendered():
    """密钥自己带着 _（sk_live_…）：原样写出来、去掉 _、_ 换成实体，都遮掉。"""
    key = "sk_live_0123456789abcdef"
    for written in (key, key.replace("_", ""), key.replace("_", "&#95;"), key.replace("_", "<i></i>")):
        assert mask(f"回显 {written} 完", [key]) == f"回显 {REDACTED} 完", written


ENCODINGS = ["plain", "dec", "hex", "HEX", "padded", "full"]
JUNK = ["<b>", "</b>", '<span class="x">', "</span>", "<!-- 注 -->", "<wbr>", "**", "*", "_", "~~", "`", "\u200b",
        "&#8203;", "&shy;", "&ZeroWidthSpace;"]
render_keys = st.text(alphabet=string.ascii_letters + string.digits + "-.", min_size=16, max_size=40)


@st.composite
def rendered_disguises(draw, key):
    """密钥的每个字随机写成它自己、各种实体或全角字母，两个字之间随机夹上标签、注释、记号、零宽空格（写成实体的也算）。"""
    pieces = []
    for index, char in enumerate(key):
        if index:
            pieces += draw(st.lists(st.sampled_from(JUNK), max_size=2))
        style = draw(st.sampled_from(ENCODINGS))
        pieces.append(char if style == "plain" else full_width(char) if style == "full" else entity(char, style))
    return "".join(pieces)


@settings(max_examples=examples(200), deadline=None)
@given(key=render_keys, around=st.tuples(surroundings, surroundings), data=st.data())
def test_a_key_a_renderer_would_show_is_masked_however_it_is_written(key, around, data):
    text = around[0] + data.draw(rendered_disguises(key)) + around[1]
    assert reveals(text, key)
    masked = mask(text, [key])
    assert not reveals(masked, key) and REDACTED in masked


@settings(max_examples=examples(200), deadline=None)
@given(key=render_keys, data=st.data(), cuts=st.lists(st.integers(1, 12), min_size=1, max_size=30),
       terminal=st.booleans())
def test_a_key_a_renderer_would_show_is_masked_wherever_the_stream_is_split(key, data, cuts, terminal):
    """流式输出（--serve 的每一块、终端）按任意长度切开：切口在实体、标签、注释的中间，或者全角字母之间，照样遮掉。"""
    text = f"回显 {data.draw(rendered_disguises(key))} 完"
    sink = io.StringIO()
    writer = SafeWriter(sink, [key], terminal_safe=terminal)
    position, turn = 0, 0
    while position < len(text):
        size = cuts[turn % len(cuts)]
        writer.write(text[position:position + size])
        writer.flush()  # 流式输出每一小段都冲刷：留着的半截不能在这时放出去
        position, turn = position + size, turn + 1
    writer.finish()
    assert not reveals(sink.getvalue(), key) and REDACTED in sink.getvalue()


# ---------- 每个入口 ----------

@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_model_echoing_its_key_with_invisible_characters_is_masked_in_every_output(fake_metaso, model_server,
                                                                                    tmp_path, separator):
    model_server.echo_separator = separator
    for mode in ([], ["--json"], ["--no-stream"]):
        page = tmp_path / f"page{len(mode)}.html"
        result = run_cli(QUESTION, "--html", str(page), *mode,
                         env=cli_env(fake_metaso, model_server, ANS_MODEL="echo-auth-hidden", ANS_API_KEY=MODEL_KEY))
        assert result.returncode in (0, 1), result.stderr
        assert REDACTED in result.stdout
        assert not shows(result.stdout + result.stderr, MODEL_KEY)
        assert not shows(page.read_text(encoding="utf-8"), MODEL_KEY)


def saved_record(tmp_path, text):
    path = tmp_path / "saved.jsonl"
    record = {"answer": GOOD_ANSWER + f"\n\n调试信息：{text} [1]。", "sources": NAS_RECORD_SOURCES}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("separator", ["\u200b", " ", "\x1b[1m"])
def test_the_last_error_line_masks_a_key_the_model_server_echoed(fake_metaso, model_server, separator):
    """模型服务报错，错误说明里回显了请求头（密钥夹着零宽空格、空格、控制序列）：最后一行的报错不显示它。"""
    model_server.echo_separator = separator
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="fail-echoes-auth",
                                            ANS_API_KEY=MODEL_KEY))
    assert result.returncode == 3 and "上游出错" in result.stderr
    assert not shows(result.stdout + result.stderr.replace(separator, ""), MODEL_KEY)


@pytest.mark.parametrize("separator", ["\u200b", " "])
def test_an_error_the_python_api_raises_is_masked(fake_metaso, model_server, separator):
    from answer_with_sources import answer_question
    from sourced_answers.core.errors import ServiceError
    model_server.echo_separator = separator
    environ = cli_env(fake_metaso, model_server, ANS_MODEL="fail-echoes-auth", ANS_API_KEY=MODEL_KEY)
    with pytest.raises(ServiceError) as raised:
        answer_question(QUESTION, environ=environ, model="fail-echoes-auth")
    shown = str(raised.value).replace(separator, "")
    assert "上游出错" in shown and "Bearer" in shown and REDACTED in shown and not shows(shown, MODEL_KEY)


def test_an_error_for_the_caller_is_masked_however_it_builds_its_message():
    """MetasoError 的说明由 message 和 next_step 拼出（不看 args）；ModelError 带着已经收到的半个回答 partial：
    交给调用方之前，这些文字里的密钥都遮掉。"""
    error = masked_error(MetasoError(f"连不上秘塔服务 http://127.0.0.1:9/{METASO_KEY}", next_step=f"请检查 {METASO_KEY}"),
                         [METASO_KEY])
    assert isinstance(error, MetasoError) and str(error) == "连不上秘塔服务 http://127.0.0.1:9/mk-***。请检查 mk-***"
    error = masked_error(ModelError(f"出错了：{MODEL_KEY}", partial=f"回答到一半 {MODEL_KEY}"), [MODEL_KEY])
    assert str(error) == "出错了：mk-***" and error.partial == "回答到一半 mk-***"


def test_the_review_page_masks_a_key_split_by_a_terminal_sequence(tmp_path):
    page = tmp_path / "page.html"
    split = MODEL_KEY[:6] + "\x1b[31m" + MODEL_KEY[6:]
    path = saved_record(tmp_path, split)
    result = run_cli("--verify", str(path), "--html", str(page), env=cli_env(ANS_API_KEY=MODEL_KEY))
    assert result.returncode in (0, 1), result.stderr
    assert not shows(page.read_text(encoding="utf-8").replace("\x1b[31m", ""), MODEL_KEY)
    assert MODEL_KEY[:6] not in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("variable", ["ANS_API_KEY", "ANS_JUDGE_API_KEY", "METASO_API_KEY"])
def test_verify_masks_every_key_the_environment_holds_even_unsent_and_interleaved(tmp_path, variable):
    """--verify 一个密钥也不发，可是记录里的密钥照样遮掉：文字、--json、审阅页、汇总。"""
    key = METASO_KEY if variable == "METASO_API_KEY" else MODEL_KEY
    path = saved_record(tmp_path, "\u00ad".join(key))
    page, summary = tmp_path / "page.html", tmp_path / "summary.json"
    for mode in ([], ["--json"]):
        result = run_cli("--verify", str(path), "--html", str(page), "--summary", str(summary), *mode,
                         env=cli_env(**{variable: key}))
        assert result.returncode in (0, 1), result.stderr
        assert not shows(result.stdout + result.stderr, key)
        assert not shows(page.read_text(encoding="utf-8"), key) and not shows(summary.read_text(encoding="utf-8"), key)


@pytest.mark.slow
def test_metaso_search_door_masks_an_interleaved_key_in_the_raw_response():
    pages = [{"title": "调试页面 " + "\u200b".join(METASO_KEY), "text": "家用 NAS 至少选两盘位。" + "\u2060".join(METASO_KEY)}]
    with FakeMetaso(pages=pages, key=METASO_KEY) as fake:
        result = run_cli("调试页面", env=cli_env(fake), module="metaso_search")
    assert result.returncode == 0, result.stderr
    assert REDACTED in result.stdout and not shows(result.stdout + result.stderr, METASO_KEY)


@pytest.mark.slow
@pytest.mark.parametrize("times", [None, 1])
def test_metaso_search_door_masks_another_services_key_in_errors_and_retry_notes(times):
    """秘塔的出错说明里回显了模型服务的密钥（ANS_API_KEY）：报错和重试提示里一样遮掉，像主命令那样。"""
    with FakeMetaso(key=METASO_KEY) as fake:
        fake.fail("search", status=500, content_type="text/plain", times=times,
                  body="bad token " + "\u200b".join(MODEL_KEY))
        result = run_cli("家用 NAS", env=cli_env(fake, ANS_API_KEY=MODEL_KEY), module="metaso_search")
    assert result.returncode == (3 if times is None else 0), result.stderr
    assert "秘塔返回 HTTP 500" in result.stderr and REDACTED in result.stderr
    assert not shows(result.stdout + result.stderr, MODEL_KEY)


def test_quickstart_door_masks_an_interleaved_echo(fake_metaso, model_server, capsys):
    from sourced_answers.cli import quickstart_command
    model_server.echo_separator = "\u200b"
    code = quickstart_command.main([QUESTION, "--json"], environ=cli_env(fake_metaso, model_server, ANS_MODEL="echo-auth-hidden",
                                                                 ANS_API_KEY=MODEL_KEY))
    shown = capsys.readouterr()
    assert code in (0, 1), shown.err
    assert REDACTED in shown.out and not shows(shown.out + shown.err, MODEL_KEY)


@pytest.mark.slow
def test_cluster_door_masks_interleaved_keys_in_results_and_summary(tmp_path):
    pytest.importorskip("distributed")
    import subprocess
    import sys
    path = saved_record(tmp_path, "\u200b".join(MODEL_KEY))
    out, summary = tmp_path / "out", tmp_path / "summary.json"
    done = subprocess.run([sys.executable, "-m", "sourced_answers.cluster", str(path), "--out", str(out), "--workers", "1",
                           "--summary", str(summary)], env=cli_env(ANS_API_KEY=MODEL_KEY), cwd=HERE,
                          capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode in (0, 1), done.stderr
    written = "".join(file.read_text(encoding="utf-8") for file in sorted(out.glob("*.jsonl")))
    assert REDACTED in written
    for text in (written, summary.read_text(encoding="utf-8"), done.stdout + done.stderr):
        assert not shows(text, MODEL_KEY)


QUOTED_KEY = "mk-Q\"u\\o&t<e's>Z9x8w7v6"


@pytest.mark.parametrize("written", [
    json.dumps(QUOTED_KEY)[1:-1],                               # " 和 \ 在 JSON 里写成 \" 和 \\
    "\\u200b".join(json.dumps(QUOTED_KEY)[1:-1]),               # 每两个字之间一个转义写的零宽空格
    "".join(f"\\u{ord(char):04x}" for char in QUOTED_KEY),      # 每个字都写成 \uXXXX
    "x" * 174 + json.dumps(QUOTED_KEY)[1:-1],                    # 跨过摘录的 200 个字
])
def test_a_dask_block_masks_a_key_written_with_json_escapes_in_the_input_of_its_error_records(tmp_path, written):
    """看不懂的一行（sources 不是列表）原样摘进错误记录的 input：原文里的密钥是转义过的样子，照样遮掉。"""
    from sourced_answers.batch.dask_job import check_block
    path = tmp_path / "bad.jsonl"
    path.write_text('{"answer": "' + written + '", "sources": 5}\n', encoding="utf-8")
    results, summary = check_block((str(path), 0, 10 ** 6, 0), 0, CheckSettings(), (QUOTED_KEY,))
    assert summary["errors"] == 1
    shown = json.loads(results[0])["input"]
    read = json_unescaped(shown)  # 读的人认得出转义：\" 就是 "，\u004b 就是 K
    assert shown and not shows(read, QUOTED_KEY), shown
    assert not shows(read, QUOTED_KEY[:12])  # 截短处也不留下半个


# ---------- 边界：发出去之前 ----------

BAD_KEYS = {
    "太长": "mk-" + "a" * 100_000,
    "刚刚超过上限": "mk-" + "a" * (MAX_KEY_LENGTH - 2),
    "中间有空格": "mk-abcdefgh ijklmnopqrst",
    "中间有制表符": "mk-abcdefgh\tijklmnopqrst",
    "中间有换行": "mk-abcdefgh\nijklmnopqrst",
    "控制字符": "mk-abcdefgh\x01ijklmnopqrst",
    "DEL": "mk-abcdefgh\x7fijklmnopqrst",
    "零宽空格": "mk-abcdefgh\u200bijklmnopqrst",
    "全角空格": "mk-abcdefgh\u3000ijklmnopqrst",
    "不换行空格": "mk-abcdefgh\u00a0ijklmnopqrst",
}


@pytest.mark.parametrize("why", sorted(BAD_KEYS))
def test_a_bad_metaso_key_is_refused_before_anything_is_sent(fake_metaso, model_server, why):
    key = BAD_KEYS[why]
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", METASO_API_KEY=key))
    assert result.returncode == 2 and "METASO_API_KEY 的格式不对" in result.stderr
    assert fake_metaso.requests == [] and model_server.requests == []
    assert key not in result.stderr and len(result.stderr) < 500  # 说明里不带着那 100 KB


@pytest.mark.parametrize("variable", ["ANS_API_KEY", "ANS_JUDGE_API_KEY"])
@pytest.mark.parametrize("why", ["太长", "中间有换行", "控制字符", "零宽空格"])
def test_a_bad_model_key_is_refused_before_anything_is_sent(fake_metaso, model_server, variable, why):
    key = BAD_KEYS[why].replace("mk-", "sk-")
    judge = ["--judge", "judge-yes", "--judge-url", model_server.url + "/v1"] if variable == "ANS_JUDGE_API_KEY" else []
    result = run_cli(QUESTION, *judge, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                                   **{variable: key, "OLLAMA_URL": "http://127.0.0.1:9"} if judge
                                                   else {variable: key}))
    assert result.returncode == 2 and f"{variable} 的格式不对" in result.stderr
    assert fake_metaso.requests == [] and model_server.requests == [] and model_server.probes == []


def test_a_key_at_the_limit_is_accepted(model_server):
    key = "mk-" + "k" * (MAX_KEY_LENGTH - 3)
    with FakeMetaso(key=key) as fake:
        result = run_cli(QUESTION, env=cli_env(fake, model_server, ANS_MODEL="good"))
        assert result.returncode == 0, result.stderr
        assert fake.authorizations and set(fake.authorizations) == {f"Bearer {key}"}


@pytest.mark.slow
def test_metaso_search_door_refuses_a_100_kb_key(fake_metaso):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, METASO_API_KEY=BAD_KEYS["太长"]), module="metaso_search")
    assert result.returncode == 2 and "METASO_API_KEY 的格式不对" in result.stderr and "太长" in result.stderr
    assert fake_metaso.requests == [] and "431" not in result.stderr


@pytest.mark.slow
def test_quickstart_door_refuses_a_100_kb_key_before_paying(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           METASO_API_KEY=BAD_KEYS["太长"]), module="sourced_answers.quickstart")
    assert result.returncode == 2 and "METASO_API_KEY 的格式不对" in result.stderr
    assert fake_metaso.requests == [] and model_server.requests == []


def test_the_key_limit_is_documented_where_the_variables_are():
    reference = (HERE / "docs" / "reference.md").read_text(encoding="utf-8")
    rows = [line for line in reference.splitlines() if line.startswith(("| `METASO_API_KEY`", "| `ANS_API_KEY`"))]
    assert len(rows) == 2 and all(str(MAX_KEY_LENGTH) in row for row in rows)


# ---------- 遮挡是门的构造，不是每道门自己记得 ----------

# 门模块：把东西写给人、写给别的程序的模块。它们写出去的每样东西都要经过 core.masking（或者用它的 SafeWriter、
# servers.replies）；直接 json.dumps、print、写 sys.stdout/sys.stderr、构造 Starlette 的回应，就是绕过了遮挡——
# 真要这样做，那一行要写明 “# 不经过遮挡：理由”，让人一眼看得见
DOOR_FOLDERS = ("sourced_answers/servers", "sourced_answers/api")
DOOR_FILES = ("sourced_answers/cli/run.py", "sourced_answers/cli/context.py", "sourced_answers/api/public.py",
              "sourced_answers/cli/launch.py",
              "sourced_answers/cli/cluster_command.py", "sourced_answers/outputs/review_page.py",
              "sourced_answers/batch/verification.py", "sourced_answers/batch/evaluation.py",
              "sourced_answers/batch/dask_job.py", "metaso_search.py", "answer_with_sources.py")
MECHANISM = ("sourced_answers/servers/replies.py",)
RESPONSES = {"JSONResponse", "StreamingResponse", "HTMLResponse", "PlainTextResponse", "Response"}


def door_modules():
    paths = {HERE / name for name in DOOR_FILES}
    for folder in DOOR_FOLDERS:
        paths |= set((HERE / folder).glob("*.py"))
    return sorted(path for path in paths if str(path.relative_to(HERE)) not in MECHANISM)


def unmasked_writes(source):
    """source 里绕过遮挡的写法：(行号, 写法)。"""
    import ast
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "json" \
                and func.attr == "dumps":
            name = "json.dumps"
        elif isinstance(func, ast.Name) and func.id == "print":
            name = "print"
        elif isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Attribute) \
                and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys":
            name = f"sys.{func.value.attr}.write"
        elif isinstance(func, ast.Name) and func.id in RESPONSES:
            name = func.id
        if name and "不经过遮挡：" not in lines[node.lineno - 1]:
            found.append((node.lineno, name))
    return found


def test_no_door_writes_around_the_masker():
    bypasses = {str(path.relative_to(HERE)): unmasked_writes(path.read_text(encoding="utf-8"))
                for path in door_modules()}
    assert {name: found for name, found in bypasses.items() if found} == {}


@pytest.mark.parametrize("written", ["json.dumps(record)", "print(text)", "sys.stderr.write(text)",
                                     "JSONResponse(record)", "StreamingResponse(events)"])
def test_the_door_check_notices_each_way_around_the_masker(written):
    assert unmasked_writes(f"import json, sys\n{written}\n") != []
    assert unmasked_writes(f"import json, sys\n{written}  # 不经过遮挡：测试\n") == []


def test_a_key_ending_in_a_quote_is_masked_where_a_field_stops_just_before_the_quote():
    """“资料里找不到的字”不带标点：回答里的 sk-…" 只截到引号之前，编码成 JSON 时后面跟着的正是字符串的引号，
    读的人看到的就是整个密钥。去掉两头引号这类字符的那一段也要遮，而且 JSON 仍然合法。"""
    from sourced_answers.core.secrets import secrets_to_mask

    key = 'sk-000000000"'
    secrets = secrets_to_mask({"ANS_API_KEY": key})
    assert secrets == (key, "sk-000000000")
    encoded = masked_json({"unmatched": [{"text": "调试信息 sk-000000000"}], "answer": f"调试信息 {key}"}, secrets)
    assert json.loads(encoded) == {"unmatched": [{"text": f"调试信息 {REDACTED}"}], "answer": f"调试信息 {REDACTED}"}
