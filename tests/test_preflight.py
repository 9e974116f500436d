"""付费之前先检查：地址写错（退出码 2）、模型服务不在、模型没下载（退出码 3）都在第一次请求秘塔之前发现。"""
import json
import time

import pytest

from sourced_answers.api.config import normalize_url
from sourced_answers.core.errors import ConfigError, ModelError
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import JudgeSettings, ModelSettings
from sourced_answers.model import preflight
from tests.support import cli_env, run_cli

QUESTION = "家用 NAS 怎么选"


def test_host_and_port_without_scheme_means_http():
    assert normalize_url("localhost:11434", "OLLAMA_URL") == "http://localhost:11434"
    assert normalize_url("https://metaso.cn/api/v1/", "METASO_BASE") == "https://metaso.cn/api/v1"


@pytest.mark.parametrize("value", ["ftp://127.0.0.1:1", "http://", "http://a b:1", "localhost:abc",
                                   "http://host:99999", "javascript:alert(1)", "http://-bad-:80"])
def test_bad_urls_are_config_errors(value):
    with pytest.raises(ConfigError, match="OLLAMA_URL"):
        normalize_url(value, "OLLAMA_URL")


def test_password_in_a_url_is_not_echoed():
    with pytest.raises(ConfigError) as error:
        normalize_url("http://user:secret@127.0.0.1:1", "OLLAMA_URL")
    assert "secret" not in str(error.value)


def test_scheme_less_ollama_url_is_accepted(fake_metaso, model_server):
    address = model_server.url.removeprefix("http://")
    result = run_cli(QUESTION, env=cli_env(fake_metaso, None, OLLAMA_URL=address, ANS_MODEL="good"))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("variable, value", [("OLLAMA_URL", "ftp://127.0.0.1:11434"),
                                             ("OLLAMA_URL", "http://exa mple:1"),
                                             ("METASO_BASE", "metaso.cn:notaport/api/v1"),
                                             ("METASO_BASE", "file:///etc/passwd")])
def test_bad_urls_exit_2_before_any_request(fake_metaso, model_server, variable, value):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", **{variable: value})
    result = run_cli(QUESTION, env=env)
    assert result.returncode == 2
    assert variable in result.stderr and value in result.stderr
    assert fake_metaso.requests == [] and model_server.requests == []
    assert fake_metaso.key not in result.stderr


def test_bad_judge_url_exits_2(fake_metaso, model_server):
    result = run_cli(QUESTION, "--judge", "judge-yes", "--judge-url", "gopher://x",
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and "--judge-url" in result.stderr and fake_metaso.requests == []


def test_missing_model_is_reported_before_paying(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="qwen9:7b"))
    assert result.returncode == 3 and "ollama pull qwen9:7b" in result.stderr
    assert fake_metaso.requests == [] and model_server.requests == []


def test_model_name_without_tag_means_latest(fake_metaso, model_server):
    from tests.scripted_model import SCRIPTS
    SCRIPTS["tagged:latest"] = SCRIPTS["good"]
    try:
        result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="tagged"))
    finally:
        del SCRIPTS["tagged:latest"]
    # 名字对上了，预检放行；对话接口（脚本服务不认“tagged”）再说没有
    assert "ollama pull tagged" in result.stderr and len(fake_metaso.requests) == 3


def test_a_tag_that_is_not_listed_by_a_server_other_than_ollama_is_missing_before_paying(fake_metaso, model_server):
    """“名字”和“名字:latest”是同一个模型只是 Ollama 的规矩：vLLM、LM Studio 这类服务只认一字不差的名字，
    不然预检放行、付了 3 次秘塔的费，对话接口才 404。"""
    model_server.models_listed = ["good"]
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good:latest"))
    assert result.returncode == 3 and "没有模型 good:latest（它列出的模型：good）" in result.stderr, result.stderr
    assert fake_metaso.requests == []


@pytest.mark.parametrize("reply", [(500, "{}", "application/json"), (503, "busy", "text/plain")])
def test_a_server_error_from_the_models_endpoint_is_not_a_failure(fake_metaso, model_server, reply):
    model_server.models_reply = reply  # 服务自己出错：不确定，交给真正的请求去判断
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("reply", [(404, "404 page not found", "text/plain"),
                                   (200, json.dumps({"models": "?"}), "application/json"),
                                   (200, "not json", "text/plain"),
                                   (200, "<html>Metaso</html>", "text/html")])
def test_a_server_that_is_not_openai_compatible_stops_before_paying(fake_metaso, model_server, reply):
    model_server.models_reply = reply
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and "不像 OpenAI 兼容的模型服务" in result.stderr and "OLLAMA_URL" in result.stderr
    assert len(fake_metaso.requests) == 0


def test_the_metaso_address_as_the_model_server_stops_before_paying(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", OLLAMA_URL=fake_metaso.base_url))
    assert result.returncode == 2 and "不像 OpenAI 兼容的模型服务" in result.stderr
    assert {method for method, _ in fake_metaso.requests} == {"GET"}  # 只有预检（和找对的地址），没有付费


@pytest.mark.slow
def test_the_probe_counts_against_the_timeout(fake_metaso, model_server):
    model_server.models_delay = 1.5  # 预检就用完了 --timeout
    result = run_cli(QUESTION, "--timeout", "1", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3 and "总时限 1 秒（--timeout）" in result.stderr
    assert fake_metaso.requests == []  # 时限在付费之前就用完了，秘塔一次也没有请求


def test_each_probe_waits_no_longer_than_the_time_left(monkeypatch):
    """预检每个请求的超时取“平常的 3 秒”和“--timeout 剩下的时间”里短的（按给请求的超时判断，不按墙上时间）。"""
    asked = []

    def probe(base_url, timeout, key):
        asked.append(timeout)
        return preflight.ModelList(reachable=True, status=200, models={"good"})
    monkeypatch.setattr(preflight, "probe_models", probe)
    monkeypatch.setattr(preflight, "is_ollama", lambda root, timeout=preflight.TIMEOUT: False)
    model = ModelSettings(name="good", url="http://127.0.0.1:9/v1")
    preflight.check_before_paying(model, ["good"], JudgeSettings(), Deadline(None))
    preflight.check_before_paying(model, ["good"], JudgeSettings(), Deadline(1.0))
    assert asked[0] == preflight.TIMEOUT and 0 < asked[1] <= 1.0
    with pytest.raises(ModelError, match="--timeout") as error:
        preflight.check_before_paying(model, ["good"], JudgeSettings(), Deadline(1.0, started=time.monotonic() - 2))
    assert error.value.timed_out and len(asked) == 2  # 时限已经用完：不再发预检请求


def test_eval_names_every_missing_model_before_the_first_search(fake_metaso, model_server, tmp_path):
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--models", "good,nosuch-a,wrong-source",
                     env=cli_env(fake_metaso, model_server))
    assert result.returncode == 3 and "ollama pull nosuch-a" in result.stderr
    assert fake_metaso.requests == []


def test_verify_needs_no_model(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"answer": "RAID5 至少三块盘 [1]。", "sources": [{"text": "RAID5 至少三块盘。"}]},
                               ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(path), env=cli_env(OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode == 0


def test_healthy_run_is_unchanged(fake_metaso, model_server):
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 0 and json.loads(result.stdout)["passed"]
    assert len(fake_metaso.requests) == 3 and len(model_server.requests) == 1


def test_client_side_request_errors_are_never_retried():
    import metaso_search
    from sourced_answers.core.errors import ModelError
    from sourced_answers.core.settings import ModelSettings
    from sourced_answers.model.model_client import chat
    retries = []
    with pytest.raises(metaso_search.MetasoError) as metaso_error:
        metaso_search.post("search", {"q": "x"}, key="mk-test", base="ftp://127.0.0.1:1", on_retry=retries.append)
    with pytest.raises(ModelError) as model_error:
        chat([{"role": "user", "content": "hi"}], ModelSettings(name="good", url="ftp://127.0.0.1:1"),
             on_retry=retries.append)
    assert retries == []
    assert not metaso_error.value.transient and not model_error.value.transient
    assert "METASO_BASE" in str(metaso_error.value) and "不能用" in str(model_error.value)


@pytest.mark.slow
def test_quickstart_understands_a_scheme_less_ollama_url(model_server):
    address = model_server.url.removeprefix("http://")
    env = cli_env(None, None, OLLAMA_URL=address, ANS_MODEL="good")
    result = run_cli("家用 NAS 怎么选", env=env, module="sourced_answers.quickstart")
    assert result.returncode == 0, result.stderr
    assert f"使用模型服务 http://{address}/v1（模型 good）" in result.stderr


@pytest.mark.slow
def test_quickstart_passes_a_bad_ollama_url_to_the_main_program():
    result = run_cli("家用 NAS 怎么选", env=cli_env(OLLAMA_URL="ftp://x:1"), module="sourced_answers.quickstart")
    assert result.returncode == 2 and "OLLAMA_URL" in result.stderr and "Traceback" not in result.stderr


def test_excerpts_alone_need_no_model_service_at_any_door():
    """摘录不请模型写：只有它时付费之前的检查不找回答模型的服务（以前 --serve、--mcp --excerpts 没有模型服务就起不来；
    快的一层不许连网，真去探测就是失败）。"""
    from sourced_answers.core.settings import EXCERPTS
    preflight.check_before_paying(ModelSettings(name=EXCERPTS, url="http://127.0.0.1:9/v1"), [EXCERPTS], JudgeSettings(),
                        Deadline(None))
