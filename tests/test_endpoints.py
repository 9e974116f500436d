"""模型服务的地址只整理一次（model/endpoints.py 的 api_base），预检（GET …/models）和每一次对话（回答、--fix 的改写、
评判、--eval、quickstart_command 的探测）都从这一个结果接上接口的路径：预检查的就是之后要用的地址。用户贴进来的
…/api、…/v1、…/v1/chat、…/v1/chat/completions（末尾的斜杠、大小写）都能用；在某个路径下面的网关照样能用；
真写错了，在第一次请求秘塔之前停下，说该写哪个地址。"""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourced_answers.model.endpoints import api_base, chat_url, models_url
from tests.support import GOOD_ANSWER, NAS_RECORD_SOURCES, WITH_INVENTION, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"


def metaso_calls(fake):
    return sum(1 for method, _ in fake.requests if method == "POST")


def chat_paths(server):
    return [request["path"] for request in server.requests]


# 用户贴进来的样子 → 接口前缀
@pytest.mark.parametrize("written, base", [
    ("http://127.0.0.1:11434", "http://127.0.0.1:11434/v1"),
    ("http://127.0.0.1:11434/", "http://127.0.0.1:11434/v1"),
    ("http://127.0.0.1:11434/api", "http://127.0.0.1:11434/v1"),          # Ollama 自己的接口前缀
    ("http://127.0.0.1:11434/api/chat", "http://127.0.0.1:11434/v1"),     # Ollama 自己的对话接口
    ("http://127.0.0.1:11434/API/", "http://127.0.0.1:11434/v1"),
    ("http://localhost:1234/v1", "http://localhost:1234/v1"),
    ("http://localhost:1234/V1/", "http://localhost:1234/v1"),
    ("http://localhost:1234/v1/chat", "http://localhost:1234/v1"),
    ("http://localhost:1234/v1/chat/completions", "http://localhost:1234/v1"),
    ("http://localhost:1234/V1/Chat/Completions/", "http://localhost:1234/v1"),
    ("http://localhost:1234/v1/models", "http://localhost:1234/v1"),
    ("https://api.deepseek.com/chat/completions", "https://api.deepseek.com/v1"),
    # 放在某个路径下面的网关和云端服务：路径留着
    ("http://gw:3000/openai/v1", "http://gw:3000/openai/v1"),
    ("http://gw:3000/openai/v1/chat/completions", "http://gw:3000/openai/v1"),
    ("https://dashscope.aliyuncs.com/compatible-mode/v1", "https://dashscope.aliyuncs.com/compatible-mode/v1"),
    ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"),
    ("https://open.bigmodel.cn/api/paas/v4/chat/completions", "https://open.bigmodel.cn/api/paas/v4"),
    ("https://ark.cn-beijing.volces.com/api/v3", "https://ark.cn-beijing.volces.com/api/v3"),
    ("http://[::1]:8080", "http://[::1]:8080/v1"),
])
def test_every_way_of_writing_the_address_gives_one_api_base(written, base):
    assert api_base(written) == base
    assert chat_url(written) == base + "/chat/completions" and models_url(written) == base + "/models"


segments = st.sampled_from(["", "v1", "V1", "v4", "api", "API", "chat", "completions", "models", "openai", "x", "tags"])


@settings(deadline=None)  # 机器忙时一个例子也可能超过 200 ms：这里量的不是速度
@given(path=st.lists(segments, max_size=6), slash=st.booleans())
def test_the_probe_and_the_chat_share_one_prefix_and_tidying_twice_changes_nothing(path, slash):
    url = "http://127.0.0.1:8080/" + "/".join(path) + ("/" if slash else "")
    base = api_base(url)
    assert api_base(base) == base
    assert chat_url(url).removesuffix("/chat/completions") == models_url(url).removesuffix("/models") == base


@pytest.mark.parametrize("suffix", ["", "/", "/api", "/api/", "/API", "/api/chat", "/v1", "/v1/", "/V1", "/v1/chat",
                                    "/v1/chat/", "/v1/chat/completions", "/V1/CHAT/COMPLETIONS/", "/chat/completions",
                                    "/v1/models"])
def test_the_answer_uses_the_address_the_probe_checked(fake_metaso, model_server, suffix):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           OLLAMA_URL=model_server.url + suffix))
    assert result.returncode == 0, result.stderr
    assert "/v1/models" in model_server.probes and chat_paths(model_server) == ["/v1/chat/completions"]
    assert f"{model_server.url}/v1/chat/completions" in result.stderr


@pytest.mark.parametrize("prefix, written", [("/openai/v1", "/openai/v1"), ("/openai/v1", "/openai/v1/chat/completions"),
                                             ("/openai/v1", "/openai/v1/chat"), ("/api/paas/v4", "/api/paas/v4/"),
                                             ("/api/v1", "/api/v1/models")])
def test_a_gateway_under_a_path_keeps_working(fake_metaso, model_server, prefix, written):
    model_server.prefix = prefix
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           OLLAMA_URL=model_server.url + written))
    assert result.returncode == 0, result.stderr
    assert f"{prefix}/models" in model_server.probes and chat_paths(model_server) == [f"{prefix}/chat/completions"]


@pytest.mark.parametrize("written", ["/wrong", "/api/v1", "/v2", "/ollama/v1/chat/completions"])
def test_a_wrong_path_stops_before_the_first_metaso_call_and_says_which_address_works(fake_metaso, model_server,
                                                                                       written):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           OLLAMA_URL=model_server.url + written))
    assert result.returncode == 2, result.stderr
    assert "不像 OpenAI 兼容的模型服务" in result.stderr
    assert f"请把 OLLAMA_URL 设成 {model_server.url}/v1" in result.stderr
    assert metaso_calls(fake_metaso) == 0 and model_server.requests == []


def test_a_gateway_moved_to_another_path_is_found_for_the_message(fake_metaso, model_server):
    model_server.prefix = "/openai/v1"
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           OLLAMA_URL=model_server.url + "/openai/beta/v1"))
    assert result.returncode == 2 and f"请把 OLLAMA_URL 设成 {model_server.url}/openai/v1" in result.stderr
    assert metaso_calls(fake_metaso) == 0


@pytest.mark.parametrize("status", [400, 405, 410, 415, 422])
def test_any_client_error_from_the_model_list_means_a_wrong_address(fake_metaso, model_server, status):
    """以前只有 404、405 算地址不对；别的 4xx（有的服务对不认识的路径回答 415、400）照常往下走，付了费才 404。"""
    model_server.models_reply = (status, "nope", "text/plain")
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and f"HTTP {status}" in result.stderr and metaso_calls(fake_metaso) == 0


@pytest.mark.parametrize("suffix", ["/api", "/v1/chat", "/v1/chat/completions/"])
def test_fix_rewrite_uses_the_same_address(fake_metaso, model_server, suffix):
    result = run_cli(QUESTION, "--fix", env=cli_env(fake_metaso, model_server, ANS_MODEL="fix-deletes",
                                                    OLLAMA_URL=model_server.url + suffix))
    assert result.returncode == 0, result.stderr
    assert len(chat_paths(model_server)) == 2 and set(chat_paths(model_server)) == {"/v1/chat/completions"}
    assert WITH_INVENTION.split("\n\n")[-1] not in result.stdout


@pytest.mark.parametrize("suffix", ["/api", "/v1/chat", "/V1/Chat/Completions"])
def test_the_judge_url_is_tidied_the_same_way(tmp_path, model_server, suffix):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
                     encoding="utf-8")
    result = run_cli("--verify", str(saved), "--json", "--judge", "judge-yes", "--judge-all",
                     "--judge-url", model_server.url + suffix, env=cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode == 0, result.stderr
    assert "/v1/models" in model_server.probes
    assert chat_paths(model_server) and set(chat_paths(model_server)) == {"/v1/chat/completions"}


def test_a_wrong_judge_url_stops_before_the_first_metaso_call(fake_metaso, model_server):
    result = run_cli(QUESTION, "--judge", "judge-yes", "--judge-url", model_server.url + "/judge/v1",
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and f"请把 --judge-url 设成 {model_server.url}/v1" in result.stderr
    assert metaso_calls(fake_metaso) == 0 and model_server.requests == []


def test_eval_uses_the_same_address(fake_metaso, model_server, tmp_path):
    questions = tmp_path / "问题.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--models", "good", "--json",
                     env=cli_env(fake_metaso, model_server, OLLAMA_URL=model_server.url + "/api/"))
    assert result.returncode == 0, result.stderr
    assert chat_paths(model_server) == ["/v1/chat/completions"]


def test_quickstart_probes_the_address_the_run_will_use(fake_metaso, model_server, capsys):
    """quickstart 看 OLLAMA_URL 上有没有模型服务：…/api 这样的写法也认得，不会因此改用本机的小模型。"""
    from sourced_answers.cli import quickstart_command
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", OLLAMA_URL=model_server.url + "/api")
    code = quickstart_command.main([QUESTION], environ=env)
    shown = capsys.readouterr()
    assert code == 0, shown.err
    assert f"使用模型服务 {model_server.url}/v1" in shown.err and "--local-model" not in shown.err
    assert chat_paths(model_server) == ["/v1/chat/completions"]


def test_quickstart_with_a_wrong_path_stops_before_paying(fake_metaso, model_server, capsys, monkeypatch):
    from sourced_answers.cli import quickstart_command
    from sourced_answers.model import llama_server
    monkeypatch.setattr(llama_server, "server_installed", lambda: True)
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", OLLAMA_URL=model_server.url + "/api/v1")
    code = quickstart_command.main([QUESTION], environ=env)
    assert code == 2 and f"请把 OLLAMA_URL 设成 {model_server.url}/v1" in capsys.readouterr().err
    assert metaso_calls(fake_metaso) == 0
