"""要密钥的模型服务：密钥只发给对应的模型服务，付费之前就用它检查，从不出现在任何输出里；各家服务的地址写法和
错误样子由脚本服务模仿，llama.cpp（xllamacpp，带 --api-key）真的跑一遍。"""
import json

import pytest

from sourced_answers.model.llama_server import LocalModelServer, server_installed
from sourced_answers.model.preflight import is_local
from tests.across_workers import Service, release, session_folder, use
from tests.support import GOOD_ANSWER, NAS_RECORD_SOURCES, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"
MODEL_KEY = "sk-MODEL-CANARY-0123456789"
JUDGE_KEY = "sk-JUDGE-CANARY-9876543210"


def metaso_calls(fake):
    return sum(1 for method, _ in fake.requests if method == "POST")


def never_shown(result, *keys):
    output = result.stdout + result.stderr
    assert all(key not in output for key in keys)


@pytest.mark.parametrize("flavor", ["openai", "llamacpp", "vllm"])
def test_key_is_sent_to_the_model_server_only(fake_metaso, model_server, flavor):
    model_server.required_key, model_server.flavor = MODEL_KEY, flavor
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=MODEL_KEY))
    assert result.returncode == 0, result.stderr
    assert set(model_server.authorizations) == {f"Bearer {MODEL_KEY}"}
    assert all(MODEL_KEY not in header for header in fake_metaso.authorizations)
    never_shown(result, MODEL_KEY)


@pytest.mark.parametrize("flavor", ["openai", "llamacpp", "vllm"])
def test_wrong_key_ends_before_any_metaso_call_naming_the_variable(fake_metaso, model_server, flavor):
    model_server.required_key, model_server.flavor = MODEL_KEY, flavor
    wrong = "sk-WRONG-key-4242424242"
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=wrong))
    assert result.returncode == 3 and "拒绝了密钥" in result.stderr and "ANS_API_KEY" in result.stderr
    assert metaso_calls(fake_metaso) == 0
    never_shown(result, wrong, MODEL_KEY)


def test_missing_key_says_the_server_needs_one(fake_metaso, model_server):
    model_server.required_key = MODEL_KEY
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3 and "需要密钥" in result.stderr and "export ANS_API_KEY=" in result.stderr
    assert metaso_calls(fake_metaso) == 0


@pytest.mark.parametrize("key", ["short", "sk-有中文的密钥12345", "sk-abc def-12345"])
def test_malformed_model_key_is_a_usage_error(fake_metaso, model_server, key):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=key))
    assert result.returncode == 2 and "ANS_API_KEY 的格式不对" in result.stderr and metaso_calls(fake_metaso) == 0


def test_judge_on_another_server_gets_its_own_key_and_never_the_other(tmp_path, model_server):
    from tests.scripted_model import ScriptedModel
    judge_server = ScriptedModel()
    try:
        judge_server.required_key = JUDGE_KEY
        path = tmp_path / "saved.json"
        path.write_text(json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
                        encoding="utf-8")
        env = cli_env(None, model_server, ANS_API_KEY=MODEL_KEY, ANS_JUDGE_API_KEY=JUDGE_KEY)
        result = run_cli("--verify", str(path), "--json", "--judge", "judge-yes", "--judge-all", "--judge-url",
                         judge_server.url, env=env)
        assert result.returncode == 0, result.stderr
        assert set(judge_server.authorizations) == {f"Bearer {JUDGE_KEY}"}
        assert model_server.authorizations == []  # --verify 不找回答用的模型
        record = json.loads(result.stdout)
        assert record["judge"]["calls"] and JUDGE_KEY not in result.stdout
        never_shown(result, MODEL_KEY, JUDGE_KEY)
        wrong = run_cli("--verify", str(path), "--judge", "judge-yes", "--judge-url", judge_server.url,
                        env=cli_env(None, model_server, ANS_API_KEY=JUDGE_KEY))
        assert wrong.returncode == 3 and "ANS_JUDGE_API_KEY" in wrong.stderr  # 回答模型的密钥不会发给评判的服务
    finally:
        judge_server.close()


def test_echoed_key_is_masked_everywhere(fake_metaso, model_server, tmp_path):
    """服务把请求头原样写进回答里：文字输出、JSON 和审阅页都看不到密钥。"""
    echoed = f"家用 NAS 至少选两盘位，方便做 RAID1 镜像，调试信息 Bearer {MODEL_KEY} [1]。"
    model_server.fuzz_reply = (json.dumps({"choices": [{"message": {"content": echoed}, "finish_reason": "stop"}]},
                                          ensure_ascii=False), "application/json")
    for mode in ([], ["--json"]):
        page = tmp_path / f"page{len(mode)}.html"
        result = run_cli(QUESTION, "--no-stream", "--html", str(page), *mode,
                         env=cli_env(fake_metaso, model_server, ANS_MODEL="fuzz", ANS_API_KEY=MODEL_KEY))
        assert result.returncode in (0, 1), result.stderr
        assert "Bearer mk-***" in result.stdout
        never_shown(result, MODEL_KEY)
        assert MODEL_KEY not in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434", "http://localhost:1234/v1", "http://192.168.1.10:8000",
                                 "http://10.0.0.5:3000/v1", "http://[::1]:8080", "http://my-nas:11434",
                                 "http://nas.local:11434"])
def test_local_servers_are_local(url):
    assert is_local(url)


@pytest.mark.parametrize("url", ["https://api.deepseek.com", "https://dashscope.aliyuncs.com/compatible-mode/v1",
                                 "https://api.siliconflow.cn/v1", "https://api.moonshot.cn/v1", "http://8.8.8.8:80"])
def test_hosted_endpoints_are_not_local(url):
    assert not is_local(url)


def test_model_missing_from_a_non_ollama_list_is_reported_before_paying(fake_metaso, model_server):
    model_server.models_listed = ["Qwen/Qwen2.5-7B-Instruct"]
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3 and "它列出的模型：Qwen/Qwen2.5-7B-Instruct" in result.stderr
    assert "ollama pull" not in result.stderr and metaso_calls(fake_metaso) == 0


@pytest.fixture(scope="module")
def keyed_llama_cpp(tmp_path_factory):
    """要密钥的 llama.cpp：一次测试会话只起一个，几个 xdist 进程共用（tests/across_workers.py）；
    和 real_model 一样只用一个线程。"""
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    folder = session_folder(tmp_path_factory)

    def start():
        server = LocalModelServer(n_ctx=2048, api_key=MODEL_KEY, threads=1, batch_threads=1).start()
        return Service(server.url, server.model), server.close

    yield use(folder, "keyed_llama_cpp", start)
    release(folder, "keyed_llama_cpp")


@pytest.mark.slow
def test_key_protected_llama_cpp_answers_through_the_tool(fake_metaso, keyed_llama_cpp):
    env = cli_env(fake_metaso, keyed_llama_cpp, ANS_MODEL=keyed_llama_cpp.model, ANS_API_KEY=MODEL_KEY,
                  OLLAMA_URL=keyed_llama_cpp.url + "/v1")
    # 要看的是密钥送到、回答回来：一条（中文的）搜索结果就够，提示词短，小模型读得快
    result = run_cli("How should I choose a home NAS?", "--read", "0", "--size", "1", "--max-tokens", "16", "--json",
                     env=env)
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["answer"]
    never_shown(result, MODEL_KEY)


@pytest.mark.slow
@pytest.mark.parametrize("key", [None, "sk-WRONG-key-4242424242"])
def test_key_protected_llama_cpp_refuses_a_wrong_or_missing_key_before_paying(fake_metaso, keyed_llama_cpp, key):
    extra = {"ANS_API_KEY": key} if key else {}
    result = run_cli(QUESTION, env=cli_env(fake_metaso, keyed_llama_cpp, ANS_MODEL="x", **extra))
    assert result.returncode == 3 and "ANS_API_KEY" in result.stderr
    assert ("拒绝了密钥" if key else "需要密钥") in result.stderr
    assert metaso_calls(fake_metaso) == 0
