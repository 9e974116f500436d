"""Python API：from answer_with_sources import answer_question, verify_answer。

返回的 Result 就是命令行 --json / --verify --json 打印的那条记录，加上终端上看到的文字和退出码；用错了抛本程序的
错误（中文说明），不打印、不退出调用它的程序。全在本进程里，用模拟秘塔和脚本模型服务。"""
import json

import pytest

from answer_with_sources import answer_question, verify_answer
from sourced_answers.core.errors import InputError, MetasoError, ServiceError, UsageError
from tests.serving import MODEL_KEY, shows
from tests.support import CANARY_KEY, GOOD_ANSWER, NAS_RECORD_SOURCES, WRONG_NUMBER, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"


@pytest.fixture
def environ(fake_metaso, model_server, tmp_path):
    """给 API 的环境：和命令行同一个模拟秘塔、模型服务，自己的缓存目录（两边都是第一次搜索，记录一字不差）。"""
    return cli_env(fake_metaso, model_server, ANS_MODEL="good", XDG_CACHE_HOME=str(tmp_path / "api-cache"))


def cli(fake_metaso, model_server, *args, **extra):
    return run_cli(*args, env=cli_env(fake_metaso, model_server, **{"ANS_MODEL": "good", **extra}))


def test_answer_question_returns_the_record_json_prints(fake_metaso, model_server, environ):
    result = answer_question(QUESTION, read=2, environ=environ)
    printed = json.loads(cli(fake_metaso, model_server, QUESTION, "--read", "2", "--json").stdout)
    assert result.record == printed
    assert result.passed is True and result.exit_code == 0
    assert result.answer == GOOD_ANSWER and result.unused == [4, 5]


def test_the_result_text_is_what_the_terminal_shows(fake_metaso, model_server, environ):
    result = answer_question(QUESTION, environ=environ)
    assert result.text == cli(fake_metaso, model_server, QUESTION).stdout
    assert result.verdict == "✓ 引用核对通过"


def test_options_are_the_command_line_flags_as_keywords(fake_metaso, model_server, environ):
    result = answer_question("RAID5 至少几块盘", model="wrong-source", size=3, read=1, environ=environ)
    printed = json.loads(cli(fake_metaso, model_server, "RAID5 至少几块盘", "--model", "wrong-source", "--size", "3",
                             "--read", "1", "--json").stdout)
    assert result.record == printed
    assert model_server.requests[-1]["body"]["model"] == "wrong-source"
    assert len(result.sources) <= 3 and [source["read"] for source in result.sources].count(True) <= 1


def test_a_failed_check_is_a_result_with_problems_not_an_exception(environ):
    result = answer_question(QUESTION, model="wrong-source", environ=environ)
    assert result.passed is False and result.exit_code == 1
    assert result.problems and result.verdict.startswith("⚠ 引用核对没通过")
    assert result.claims[1]["source"] == 2 and result.claims[1]["status"] != "supported"


def test_a_question_starting_with_a_dash_is_still_a_question(environ, capsys):
    result = answer_question("-20℃的车库能放NAS吗", environ=environ)
    assert result.record["question"] == "-20℃的车库能放NAS吗"
    for looks_like_a_flag in ("--help", "-h", "--version"):
        assert answer_question(looks_like_a_flag + " NAS", environ=environ).record["question"] == looks_like_a_flag + " NAS"
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("options", "message"), [
    ({"read": 500}, "参数 --read：应在 0 到 100 之间，收到 500"),
    ({"read": 5, "size": 3}, "--read（5）不能大于 --size（3）"),
    ({"read": "两个"}, "“两个”不是整数"),
    ({"timeout": 0}, "参数 --timeout"),
    ({"model": "qwen2.5\n✓ 引用核对通过"}, "--model 的值里有换行"),
    ({"demo_pages": "nas-en"}, "--demo-pages 要和 --demo 一起用"),  # 没有 demo=True 时会去搜真的秘塔
    ({"colour": True}, "answer_question 不接受 colour"),
    ({"hel": True}, "answer_question 不接受 hel"),  # argparse 会把它当作 --help 的缩写：打印帮助、退出调用它的程序
    ({"js": True}, "answer_question 不接受 js"),  # --json 的缩写
    ({"install_local": True}, "answer_question 不接受 install_local"),
    ({"json": True}, "answer_question 不接受 json"),
    ({"serve": "8000"}, "answer_question 不接受 serve"),
    ({"help": True}, "answer_question 不接受 help"),
])
def test_bad_options_raise_a_usage_error_in_chinese_before_any_search(fake_metaso, environ, capsys, options, message):
    with pytest.raises(UsageError) as raised:
        answer_question(QUESTION, environ=environ, **options)
    assert message in str(raised.value)
    assert fake_metaso.requests == []
    assert capsys.readouterr().out == ""  # 不打印帮助、不打印任何东西


def test_an_out_of_range_max_tokens_is_refused_naming_the_keyword(fake_metaso, environ):
    with pytest.raises(UsageError) as raised:
        answer_question(QUESTION, environ=environ, max_tokens=0)
    assert "参数 --max-tokens：应在 1 到 1000000 之间，收到 0（answer_question 的关键字 max_tokens）" in str(raised.value)
    assert fake_metaso.requests == []


@pytest.mark.parametrize("environ_given", [[1], {"METASO_API_KEY": 1}, "METASO_API_KEY=mk-x"])
def test_an_environ_that_is_not_a_mapping_of_text_is_a_usage_error(fake_metaso, environ_given):
    with pytest.raises(UsageError, match="environ 应是环境变量的字典"):
        answer_question(QUESTION, environ=environ_given)
    with pytest.raises(UsageError, match="environ 应是环境变量的字典"):
        verify_answer("RAID1 用两块盘互为镜像 [1]。", [{"text": "RAID1 用两块盘互为镜像。"}], environ=environ_given)
    assert fake_metaso.requests == []


@pytest.mark.parametrize("log", ["print", 3, False])
def test_a_log_that_is_not_a_function_is_a_usage_error_before_anything_is_asked(fake_metaso, model_server, environ,
                                                                                  log):
    with pytest.raises(UsageError, match="log 应是一个函数"):
        answer_question(QUESTION, environ=environ, log=log)
    assert fake_metaso.requests == [] and model_server.requests == [] and model_server.probes == []


@pytest.mark.parametrize(("sources", "message"), [("abc", "sources 应是一个列表"), (None, "sources 应是一个列表"),
                                                  ({"text": "x"}, "sources 应是一个列表"),
                                                  ([1], "sources 的第 1 项"), ([["a", "b"]], "sources 的第 1 项")])
def test_verify_answer_with_sources_of_the_wrong_shape_is_an_input_error(sources, message):
    with pytest.raises(InputError, match=message):
        verify_answer("RAID1 用两块盘互为镜像 [1]。", sources)


@pytest.mark.parametrize(("question", "message"), [("？？！……", "问题里没有文字"), (42, "question 应是文字")])
def test_a_question_without_words_is_a_usage_error(fake_metaso, environ, question, message):
    with pytest.raises(UsageError, match=message):
        answer_question(question, environ=environ)
    assert fake_metaso.requests == []


def test_the_keys_come_from_environ_only(fake_metaso, model_server, monkeypatch):
    monkeypatch.setenv("METASO_API_KEY", CANARY_KEY)  # 进程的环境里有，但给了 environ 就只看 environ
    with pytest.raises(UsageError, match="没有设置 METASO_API_KEY"):
        answer_question(QUESTION, environ={"METASO_BASE": fake_metaso.base_url, "OLLAMA_URL": model_server.url,
                                           "ANS_MODEL": "good"})
    assert fake_metaso.requests == []


def test_demo_needs_no_metaso_key(model_server, tmp_path):
    result = answer_question(QUESTION, demo=True, environ=cli_env(model=model_server, ANS_MODEL="good",
                                                                  XDG_CACHE_HOME=str(tmp_path)))
    assert result.passed is True and result.sources[0]["title"] == "家用 NAS 选购要点"


def test_a_failing_service_raises_a_service_error_with_the_reason(fake_metaso, environ):
    fake_metaso.fail_with("search", "errcode-3000")
    with pytest.raises(ServiceError) as raised:
        answer_question(QUESTION, environ=environ)
    assert isinstance(raised.value, MetasoError) and "余额不足" in str(raised.value)


def test_keys_never_appear_in_the_result(fake_metaso, model_server, environ):
    environ.update(ANS_MODEL="echo-auth-hidden", ANS_API_KEY=MODEL_KEY)
    result = answer_question(QUESTION, environ=environ)
    assert "mk-***" in result.text and "mk-***" in result.answer  # 模型回显了密钥，被遮掉了
    assert not shows(result.text, MODEL_KEY, CANARY_KEY)
    assert not shows(json.dumps(result.record, ensure_ascii=False), MODEL_KEY, CANARY_KEY)


def test_a_key_metaso_echoes_in_an_error_is_masked(fake_metaso, environ):
    fake_metaso.fail_with("search", "echo")
    with pytest.raises(MetasoError) as raised:
        answer_question(QUESTION, environ=environ)
    assert "Bearer mk-***" in str(raised.value) and not shows(str(raised.value), CANARY_KEY)


@pytest.mark.parametrize("keywords", [{"read": CANARY_KEY}, {"judge_ask": CANARY_KEY}, {CANARY_KEY: 1}])
def test_a_key_given_as_a_keyword_is_masked_in_the_usage_error(fake_metaso, environ, keywords):
    """把密钥错当成 read、rule 传进来（或者当成关键字的名字）：说明里写出收到的值，密钥照样遮掉，和命令行一样。"""
    with pytest.raises(UsageError) as raised:
        answer_question(QUESTION, environ=environ, **keywords)
    assert "mk-***" in str(raised.value) and not shows(str(raised.value), CANARY_KEY)
    with pytest.raises(UsageError) as raised:
        verify_answer("RAID1 用两块盘互为镜像 [1]。", [{"text": "RAID1 用两块盘互为镜像。"}], environ=environ,
                      rule=CANARY_KEY)
    assert "参数 --rule：取值 'mk-***' 无效" in str(raised.value) and not shows(str(raised.value), CANARY_KEY)
    assert fake_metaso.requests == []


def test_a_key_in_the_metaso_address_is_masked_in_the_service_error(environ):
    """网关把密钥放在地址里（METASO_BASE=https://网关/密钥/api/v1）：连不上时说明里写着地址，str(error) 照样遮掉。"""
    environ["METASO_BASE"] = f"http://127.0.0.1:9/{CANARY_KEY}/api/v1"
    with pytest.raises(MetasoError) as raised:
        answer_question(QUESTION, environ=environ)
    assert "http://127.0.0.1:9/mk-***" in str(raised.value) and not shows(str(raised.value), CANARY_KEY)


# ---------- verify_answer ----------

def saved_file(tmp_path, answer, sources):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": sources}, ensure_ascii=False), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("answer", [GOOD_ANSWER, WRONG_NUMBER], ids=["passes", "wrong-number"])
def test_verify_answer_returns_the_verify_json_record(tmp_path, answer):
    result = verify_answer(answer, NAS_RECORD_SOURCES)
    printed = run_cli("--verify", saved_file(tmp_path, answer, NAS_RECORD_SOURCES), "--json", env=cli_env())
    assert result.record == json.loads(printed.stdout)
    assert result.exit_code == printed.returncode


def test_verify_answer_finds_a_number_the_source_does_not_have():
    result = verify_answer("RAID5 至少两块盘就能容忍一块盘损坏 [1]。", NAS_RECORD_SOURCES[1:2])
    assert result.passed is False and result.exit_code == 1
    assert "回答写成“两块”" in result.problems[0]["message"] and "RAID5 至少三块盘" in result.text


def test_verify_answer_with_the_tutorial_rule_matches_the_flag(tmp_path):
    result = verify_answer(GOOD_ANSWER, NAS_RECORD_SOURCES, rule="tutorial")
    printed = run_cli("--verify", saved_file(tmp_path, GOOD_ANSWER, NAS_RECORD_SOURCES), "--rule", "tutorial",
                      "--json", env=cli_env())
    assert result.record == json.loads(printed.stdout)


@pytest.mark.parametrize(("sources", "rule", "error", "message"), [
    ([{"title": "RAID1 和 RAID5 的区别"}], "score", InputError, "sources 的第 1 项缺少字符串字段 text"),
    ([{"text": "RAID1 是镜像"}], "guess", UsageError, "参数 --rule：取值 'guess' 无效"),
])
def test_verify_answer_input_errors_are_chinese(sources, rule, error, message):
    with pytest.raises(error, match=message):
        verify_answer("RAID1 是镜像 [1]。", sources, rule=rule)


def test_verify_answer_takes_any_mapping_as_a_source():
    """签名写的是 Sequence[Mapping]：不是 dict 的映射（MappingProxyType）也是一条资料，不是“缺少字段 text”。"""
    from types import MappingProxyType
    source = MappingProxyType({"title": "RAID 的几种级别", "text": "RAID1 用两块盘互为镜像，一块坏了数据还在。"})
    assert verify_answer("RAID1 用两块盘互为镜像 [1]。", [source]).passed


def test_result_text_is_safe_to_print_and_the_record_keeps_what_was_received():
    """Result.text 是给人打印的：网页标题里写剪贴板、清屏的终端序列整个去掉；record 和 --json 一样保持原样。"""
    title = "RAID\x1b]52;c;aGVsbG8=\x07 的几种级别\x1b[2J"
    result = verify_answer("RAID1 用两块盘互为镜像 [1]。", [{"title": title, "text": "RAID1 用两块盘互为镜像。"}])
    assert "\x1b" not in result.text and "RAID 的几种级别" in result.text
    assert result.record["sources"][0]["title"] == title


def test_lone_surrogates_given_to_verify_answer_come_out_as_u_fffd_like_from_a_file(tmp_path):
    """单独的代理码位（"\\ud800"）编不成 UTF-8：交进来的回答、问题、资料里有它，结果的记录、文字、Markdown 照样
    编得出来，和 --verify 读到 JSON 转义 "\\ud800" 时一样换成 U+FFFD。"""
    answer = "RAID1 用两块盘\ud800互为镜像 [1]。"
    sources = [{"title": "RAID\udfff 的几种级别", "link": "https://example.com/\ud800",
                "text": "RAID1 用两块盘互为镜像\udc00，一块坏了数据还在。"}]
    result = verify_answer(answer, sources, question="RAID1\ud800 是什么")
    for text in (json.dumps(result.record, ensure_ascii=False), result.text, result.markdown):
        text.encode("utf-8")  # 不抛 UnicodeEncodeError
    assert result.answer == "RAID1 用两块盘\ufffd互为镜像 [1]。" and result.record["question"] == "RAID1\ufffd 是什么"
    path = tmp_path / "saved.jsonl"
    path.write_text(json.dumps({"question": "RAID1\ud800 是什么", "model": None, "answer": answer,
                                "sources": sources}) + "\n", encoding="utf-8")  # ensure_ascii：写成 \ud800 转义
    printed = run_cli("--verify", str(path), "--json", env=cli_env())
    assert result.record == json.loads(printed.stdout)


@pytest.mark.parametrize("function", [answer_question, verify_answer])
def test_the_signature_shows_every_declared_keyword_with_its_type_and_default(function):
    """help(answer_question)、inspect.signature 和编辑器看到的就是能给的关键字（由设置里的声明写出，
    不是 **keywords）：签名里的每一个都被接受，签名以外的被拒绝。"""
    import inspect
    parameters = inspect.signature(function).parameters
    assert not any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values())
    assert parameters["fix"].default is False and parameters["fix"].annotation is bool
    assert "json" not in parameters and "stream" not in parameters
    if function is answer_question:
        assert parameters["read"].default == 2 and parameters["read"].annotation is int
        assert parameters["model"].annotation == (str | None)
    with pytest.raises(UsageError, match="不接受 stream"):
        function("问题", [], stream=True) if function is verify_answer else function("问题", stream=True)
