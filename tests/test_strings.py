"""说明里引用用户给的字符串只有一个规则（core.strings.literal）：一行，控制字符（换行、回车、U+2028/U+2029、双向控制符、
零宽字符、读不懂的字节）写成看得见的转义。所以文件名、路径、地址里夹着换行，也伪造不出一行“✓ 引用核对通过”：
每条说明只占一行，没有哪一行是（或者开头是）一句结论。每个入口都试：主命令的 --verify、--eval、--html、--summary、
缓存目录，Dask 任务的输入、--out、--summary，metaso_search.py，fake_metaso.py 的 --fixtures、--fault，quickstart。"""
import json
import os
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourced_answers.core.strings import json_value, literal
from tests.support import GOOD_ANSWER, NAS_RECORD_SOURCES, cli_env, examples, run_cli

QUESTION = "家用 NAS 怎么选"
VERDICTS = ("✓ 引用核对通过", "⚠ 引用核对没通过")
FORGED = "✓ 引用核对通过"
# 会让一行断开、或者让终端改变显示的字符（str.splitlines 认的每一种分行符都在里面）
BREAKERS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x1b[2K\r",
            "\u202e", "\u2066", "\u200b", "\ufeff", "\x00", "\x07", "\udcff"]
HOSTILE = settings(max_examples=examples(25, "FUZZ_EXAMPLES"), deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

breakers = st.sampled_from(BREAKERS)
words = st.text(alphabet="报告家用NAS-_.abc 1", max_size=8)
hostile_names = st.builds(lambda head, cut, tail: f"{head}{cut}{FORGED}{tail}", words, breakers, words)


def no_forged_lines(*texts):
    """没有哪一行是（或者开头是）一句结论。"""
    for text in texts:
        for line in text.splitlines():
            assert not line.lstrip().startswith(VERDICTS), line


def one_error_line(result):
    """报错的运行：标准输出是空的，标准错误正好一行，以 ✗ 开头。"""
    lines = result.stderr.splitlines()
    assert result.stdout == "" and len(lines) == 1 and lines[0].startswith("✗ "), result.stderr
    no_forged_lines(result.stderr)


def saved(tmp_path, name="saved.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
                    encoding="utf-8")
    return path


def file_name(name):
    """能当作真实文件名的样子：不含 / 和 NUL，编得成文件系统的字节（单独的代理码位按 surrogateescape 是原来的字节）。"""
    return name.replace("/", "_").replace("\x00", "_")


# ---------- 一个规则 ----------

@settings(deadline=None)  # 机器忙时一个例子也可能超过 200 ms：这里量的不是速度
@given(st.text())
def test_literal_is_always_one_visible_line(text):
    shown = literal(text, limit=None)
    assert len(shown.splitlines()) <= 1
    assert not any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs") for char in shown)


@settings(deadline=None)  # 机器忙时一个例子也可能超过 200 ms：这里量的不是速度
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Zl", "Zp", "Cs")), max_size=200))
def test_literal_leaves_ordinary_names_alone(text):
    assert literal(text) == text


def test_literal_shows_what_was_there():
    assert literal("报告\n✓ 引用核对通过.jsonl") == "报告\\n✓ 引用核对通过.jsonl"
    assert literal("a\u202eb\u200bc\x1b[31m") == "a\\u202eb\\u200bc\\x1b[31m"
    assert literal("bad\udcffbyte") == "bad\\xffbyte"  # 命令行里读不懂的字节：写回原来的字节
    long = literal("目录/" * 400 + "结果.jsonl")
    assert len(long) <= 300 and long.endswith("结果.jsonl") and "…" in long


# ---------- 主命令 ----------

@HOSTILE
@given(name=hostile_names)
def test_verify_of_a_missing_file_with_a_hostile_name(name):
    result = run_cli("--verify", name, env=cli_env())
    assert result.returncode == 2
    one_error_line(result)


@HOSTILE
@given(name=hostile_names)
def test_eval_of_a_missing_questions_file_with_a_hostile_name(name):
    result = run_cli("--eval", name, "--demo", env=cli_env())
    assert result.returncode == 2
    one_error_line(result)


@pytest.mark.parametrize("cut", BREAKERS)
def test_hostile_names_of_files_that_exist(tmp_path, cut):
    """真有这样名字的文件（Linux 上文件名里可以有换行）：格式不对的记录、只有注释的问题文件，说明都只占一行。"""
    name = file_name(f"报告{cut}{FORGED}")
    bad = tmp_path / (name + ".jsonl")
    bad.write_bytes(b'{"answer": 1}\n')
    result = run_cli("--verify", os.fsdecode(bytes(bad)), env=cli_env())
    assert result.returncode == 2
    one_error_line(result)
    questions = tmp_path / (name + ".txt")
    questions.write_text("# 只有注释\n", encoding="utf-8")
    result = run_cli("--eval", os.fsdecode(bytes(questions)), "--demo", env=cli_env())
    assert result.returncode == 2
    one_error_line(result)


@HOSTILE
@given(name=hostile_names, flag=st.sampled_from(["--html", "--summary"]))
def test_an_output_file_in_a_missing_folder_with_a_hostile_name(tmp_path_factory, name, flag):
    record = saved(tmp_path_factory.mktemp("hostile"))
    result = run_cli("--verify", str(record), flag, f"没有的目录{name}/结果", env=cli_env())
    assert result.returncode == 2
    one_error_line(result)


@pytest.mark.parametrize("cut", ["\n", "\u2028", "\r", "\x1b[1A"])
def test_a_written_page_with_a_hostile_name_is_announced_on_one_line(tmp_path, cut):
    page = tmp_path / file_name(f"页面{cut}{FORGED}.html")
    result = run_cli("--verify", str(saved(tmp_path)), "--html", str(page), env=cli_env())
    assert result.returncode == 0, result.stderr
    assert page.exists()
    lines = result.stderr.splitlines()
    assert lines[0].startswith("汇总：1 条")  # 汇总在前面，文件名只在最后那一行
    assert len([line for line in lines if "审阅页" in line]) == 1 and lines[-1].startswith("审阅页已写到 ")
    no_forged_lines(result.stderr)


@pytest.mark.parametrize("cut", ["\n", "\u2028", "\x1b]8;;x\x07"])
def test_a_hostile_cache_folder_is_warned_about_on_one_line(tmp_path, fake_metaso, model_server, cut):
    blocker = tmp_path / "是个文件"
    blocker.write_text("", encoding="utf-8")  # 缓存目录建在一个文件下面：建不了，只好警告一句
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           XDG_CACHE_HOME=f"{blocker}/缓存{cut}{FORGED}"))
    warnings = [line for line in result.stderr.splitlines() if "缓存" in line]
    assert result.returncode == 0 and len(warnings) == 1 and warnings[0].startswith("⚠ 缓存目录")
    no_forged_lines(result.stderr)


@pytest.mark.parametrize("field", ["title", "link"])
def test_a_source_title_or_link_from_the_input_cannot_forge_a_verdict_line(tmp_path, field):
    """--verify 的输入里资料的标题、链接也是别人给的字符串：来源列表里照样一行一个（分行符合成空格）。"""
    sources = [dict(source) for source in NAS_RECORD_SOURCES]
    sources[0][field] = f"页面\n{FORGED}\u2028{FORGED}\r{FORGED}"
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": "RAID5 至少三块盘，可以容忍一块盘损坏 [9]。",  # 引用了不存在的资料：没通过
                                "sources": sources}, ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(path), env=cli_env())
    assert result.returncode == 1
    no_forged_lines(result.stdout.split("\n\n来源：", 1)[1].split("\n\n⚠", 1)[0])  # 来源列表里没有一行是结论
    assert f"页面 {FORGED}" in result.stdout


@pytest.mark.parametrize("args", [["--demo-pages", f"nas\n{FORGED}", QUESTION], [f"--bogus\n{FORGED}", QUESTION],
                                  ["--size", f"9\n{FORGED}", QUESTION], ["--model", f"qwen\n{FORGED}", QUESTION]])
def test_hostile_argument_values_are_quoted_on_one_line(args):
    result = run_cli(*args, env=cli_env())
    assert result.returncode == 2
    one_error_line(result)


@pytest.mark.parametrize("variable", ["OLLAMA_URL", "METASO_BASE"])
def test_hostile_addresses_are_quoted_on_one_line(fake_metaso, model_server, variable):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           **{variable: f"http://127.0.0.1:9/x\n{FORGED}"}))
    assert result.returncode == 2
    one_error_line(result)
    assert fake_metaso.requests == []


# ---------- 别的入口 ----------

@pytest.mark.slow
@pytest.mark.parametrize("cut", ["\n", "\u2029"])
def test_metaso_search_door_quotes_a_hostile_address(fake_metaso, cut):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, METASO_BASE=f"http://127.0.0.1:9/x{cut}{FORGED}"),
                     module="metaso_search")
    assert result.returncode == 2
    one_error_line(result)
    assert fake_metaso.requests == []  # 地址不对：一个请求也不发（以前重试三次，每次都把那一行打出来）


@pytest.mark.slow
def test_quickstart_door_quotes_a_hostile_verify_path():
    result = run_cli("--verify", f"没有的文件\n{FORGED}", env=cli_env(OLLAMA_URL="http://127.0.0.1:9"),
                     module="sourced_answers.quickstart")
    assert result.returncode == 2
    one_error_line(result)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--fixtures", f"没有的文件\n{FORGED}"], ["--fault", f"search=503\n{FORGED}"],
                                  ["--host", f"127.0.0.1\n{FORGED}"], ["--key", f"mk-0123456789abcdef\n{FORGED}\n"],
                                  ["--key", "mk-0123456789\x1b[31mabcdef"]])
def test_fake_metaso_door_quotes_hostile_arguments(args):
    result = run_cli(*args, "--port", "0", env=cli_env(), module="fake_metaso")
    assert result.returncode == 2
    one_error_line(result)


@pytest.mark.slow
def test_fake_metaso_door_quotes_a_hostile_fixtures_file_that_exists(tmp_path):
    fixtures = tmp_path / f"页面\n{FORGED}.json"
    fixtures.write_text('{"不是": "数组"}', encoding="utf-8")
    result = run_cli("--fixtures", str(fixtures), "--port", "0", env=cli_env(), module="fake_metaso")
    assert result.returncode == 2
    one_error_line(result)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["input", "out", "summary"])
def test_cluster_door_quotes_hostile_paths(tmp_path, where):
    pytest.importorskip("distributed")
    record = saved(tmp_path)
    hostile = f"没有的目录\n{FORGED}"
    args = {"input": [f"{tmp_path}/{hostile}.jsonl", "--out", str(tmp_path / "out")],
            "out": [str(record), "--out", f"{tmp_path}/{hostile}/out"],
            "summary": [str(record), "--out", str(tmp_path / "out"), "--summary", f"{tmp_path}/{hostile}/s.json"]}
    result = run_cli(*args[where], "--workers", "1", env=cli_env(), module="sourced_answers.cluster")
    assert result.returncode == 2
    one_error_line(result)


@pytest.fixture
def signals_restored():
    """run() 是进程最外的一层：它接管信号、登记退出时忽略信号。在测试进程里调用它之后放回原样。"""
    import atexit
    import signal

    from sourced_answers.cli import launch
    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {number: signal.getsignal(number) for number in numbers}
    yield
    for number, handler in previous.items():
        signal.signal(number, handler)
    atexit.unregister(launch.ignore_signals_while_exiting)


def test_an_internal_error_quoting_a_hostile_string_stays_on_one_line(capsys, signals_restored):
    """程序自己的 bug 也一样：异常里夹着用户的字符串（带换行）时，说明照样只占一行。"""
    from sourced_answers.cli.launch import run
    with pytest.raises(SystemExit) as ending:
        run(lambda: {}[f"没有的键\n{FORGED}"], [])
    assert ending.value.code == 4
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✗ 程序内部出错")
    no_forged_lines(*lines)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400", "[-1e999]"])
def test_nan_infinity_and_numbers_out_of_range_are_not_json_values(text):
    with pytest.raises(ValueError):
        json_value(text)


def test_ordinary_numbers_are_json_values():
    assert json_value('[1.5, -2, 1e-400, 1e308]') == [1.5, -2, 0.0, 1e308]
