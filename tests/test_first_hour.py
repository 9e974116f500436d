"""新用户第一个小时会碰到的门：自带模型（--local-model）、按问题语言选的演示页面、程序名和 --version、
只启动需要的东西（quickstart --verify）。"""
import json
import subprocess
import sys

import pytest

from fake_metaso import ENGLISH_PAGES, NAS_PAGES
from sourced_answers import __version__
from sourced_answers.core.settings import BUNDLED_MAX_TOKENS
from sourced_answers.model import llama_server, local_serving
from tests.support import HERE, cli_env, eval_table, run_cli


def prompt_of(model_server) -> str:
    return model_server.requests[-1]["body"]["messages"][-1]["content"]


def test_demo_pages_follow_the_language_of_the_question(model_server):
    env = cli_env(None, model_server, ANS_MODEL="good")
    english = run_cli("--demo", "How should I choose a home NAS?", "--read", "0", env=env)
    assert "页面 nas-en" in english.stderr
    assert ENGLISH_PAGES[0]["title"] in prompt_of(model_server) and NAS_PAGES[0]["title"] not in prompt_of(model_server)
    chinese = run_cli("--demo", "家用 NAS 怎么选", "--read", "0", env=env)
    assert "页面 nas）" in chinese.stderr and NAS_PAGES[0]["title"] in prompt_of(model_server)
    chosen = run_cli("--demo", "How should I choose a home NAS?", "--demo-pages", "nas", "--read", "0", env=env)
    assert "页面 nas）" in chosen.stderr and NAS_PAGES[0]["title"] in prompt_of(model_server)


@pytest.mark.slow
@pytest.mark.parametrize("entry", [["answer_with_sources.py"], ["-m", "sourced_answers"]])
def test_each_entry_point_names_itself_and_has_a_version(entry):
    name = "python answer_with_sources.py" if entry[0].endswith(".py") else "python -m sourced_answers"
    if entry[0].endswith(".py"):
        entry = [str(HERE / entry[0])]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *entry, *args], cwd=HERE, env=cli_env(), capture_output=True,
                              text=True, encoding="utf-8", timeout=60, stdin=subprocess.DEVNULL)

    version = run("--version")
    assert version.returncode == 0 and version.stdout == f"{name} {__version__}\n"
    missing = run()
    assert missing.returncode == 2 and f"例如：{name} \"家用 NAS 怎么选\"" in missing.stderr
    wrong = run("--size", "0")
    assert wrong.returncode == 2 and f"（{name} -h 查看用法）" in wrong.stderr
    assert run("-h").stdout.startswith(f"用法：{name} \"问题\" [选项]")


def test_the_version_has_one_source():
    import tomllib
    project = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]
    result = run_cli("--version", env=cli_env())
    assert result.returncode == 0 and result.stdout.strip().endswith(__version__)


def test_help_is_grouped_by_task():
    result = run_cli("-h", env=cli_env())
    groups = [line[:-1] for line in result.stdout.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert groups == ["参数", "回答问题", "核对保存下来的回答（--verify）和判断规则", "修正和第二意见",
                      "比较模型（--eval）", "在聊天窗口里用（服务）", "输出", "网络和缓存", "其他"]


def test_the_serve_help_says_annotation_offsets_count_code_points_not_utf_16():
    """JavaScript 的客户端按 UTF-16 切：表情之后的 annotations 位置要换算。文档里写了，--help 里 --serve 那一条也说。"""
    result = run_cli("-h", env=cli_env())
    serve = "".join(result.stdout.split("  --serve", 1)[1].split("  --concurrency", 1)[0].split())
    assert "Unicode码位" in serve and "UTF-16" in serve and "annotations" in serve


def test_local_model_not_installed_is_a_usage_error_that_says_how_to_install(monkeypatch, fake_metaso):
    monkeypatch.setattr(llama_server, "server_installed", lambda: False)
    result = run_cli("How should I choose a home NAS?", "--local-model", env=cli_env(fake_metaso))
    assert result.returncode == 2
    assert "--local-model" in result.stderr and "answer-with-sources --install-local-model" in result.stderr
    assert fake_metaso.requests == []  # 付费之前就停下


class NoServer:
    def __init__(self, *args, **kwargs):
        raise AssertionError("这次运行不该启动本机模型")


def test_local_model_starts_nothing_when_only_verifying(monkeypatch, tmp_path):
    monkeypatch.setattr(llama_server, "LocalModelServer", NoServer)
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps({"answer": "NAS 要看盘位。[1]", "sources": [{"text": "NAS 要看盘位。"}]},
                                ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--local-model", env=cli_env())
    assert result.returncode == 0, result.stderr
    assert "本机" not in result.stderr


def test_local_model_conflicts_with_a_model_name():
    result = run_cli("How?", "--local-model", "--model", "qwen2.5:1.5b", env=cli_env())
    assert result.returncode == 2 and "--local-model" in result.stderr and "--model" in result.stderr


@pytest.fixture
def bundled_is_scripted(monkeypatch, model_server):
    """不真的启动 llama.cpp（那是 test_llama_server 的事）：--local-model 启动的是脚本模型服务，模型名是 good。"""
    class Started:
        def __init__(self, n_ctx: int = 4096, **kwargs):
            self.url, self.threads, self.batch_threads, self.n_ctx = model_server.url, 1, 2, n_ctx

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None
    monkeypatch.setattr(llama_server, "server_installed", lambda: True)
    monkeypatch.setattr(llama_server, "LocalModelServer", Started)
    monkeypatch.setattr(llama_server, "MODEL_NAME", "good")  # 脚本服务里有这个名字


def test_local_model_warns_about_chinese_questions_and_uses_a_short_default(bundled_is_scripted, fake_metaso,
                                                                            model_server):
    """看配置怎样交给（换成脚本模型服务的）自带模型。"""
    result = run_cli("家用 NAS 怎么选", "--local-model", "--read", "0", env=cli_env(fake_metaso))
    assert result.stderr.count(local_serving.ENGLISH_ONLY) == 1
    body = model_server.requests[-1]["body"]
    assert body["model"] == "good" and body["max_tokens"] == BUNDLED_MAX_TOKENS
    longer = run_cli("家用 NAS 怎么选", "--local-model", "--read", "0", "--max-tokens", "50", env=cli_env(fake_metaso))
    assert longer.returncode in (0, 1) and model_server.requests[-1]["body"]["max_tokens"] == 50


def test_eval_with_the_bundled_model_may_name_it_in_models(bundled_is_scripted, fake_metaso, model_server, tmp_path):
    """docs/usage.md 的 --eval 问题文件 --models smollm2-135m，加上 --local-model 也能跑：--models 里只有自带的模型，
    比较的就是它（以前是“不要同时给 --models”）。"""
    questions = tmp_path / "q.txt"
    questions.write_text("How should I choose a home NAS?\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--local-model", "--models", "good", "--read", "0",
                     env=cli_env(fake_metaso))
    assert result.returncode in (0, 1), result.stderr
    assert list(eval_table(result.stdout)) == ["good"] and model_server.requests[-1]["body"]["model"] == "good"


@pytest.mark.parametrize("flags", [("--models", "good,qwen2.5:1.5b"), ("--model", "qwen2.5:1.5b"),
                                   ("--models", "good,good")])
def test_eval_with_the_bundled_model_and_another_model_is_refused_with_the_form_that_works(
        bundled_is_scripted, fake_metaso, model_server, tmp_path, flags):
    questions = tmp_path / "q.txt"
    questions.write_text("How should I choose a home NAS?\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--local-model", *flags, env=cli_env(fake_metaso))
    assert result.returncode == 2 and fake_metaso.requests == [] and model_server.requests == []
    assert ("--eval 问题文件 --local-model" in result.stderr if "qwen2.5:1.5b" in flags[1]
            else "--models 里写了两次 good" in result.stderr), result.stderr


@pytest.mark.slow
def test_quickstart_verify_starts_nothing(tmp_path):
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps({"answer": "NAS 要看盘位。[1]", "sources": [{"text": "NAS 要看盘位。"}]},
                                ensure_ascii=False), encoding="utf-8")
    # 模型服务的地址指向没人听的端口：要是 quickstart 去找模型、装或启动 llama.cpp，标准错误里会说
    env = cli_env(OLLAMA_URL="http://127.0.0.1:9")
    result = run_cli("--verify", str(saved), env=env, module="sourced_answers.quickstart")
    assert result.returncode == 0, result.stderr
    assert "模拟秘塔" not in result.stderr and "llama.cpp" not in result.stderr and "模型服务" not in result.stderr
    assert "✓ 引用核对通过" in result.stdout


@pytest.mark.slow
def test_quickstart_names_itself_in_messages():
    result = run_cli("--size", "0", env=cli_env(OLLAMA_URL="http://127.0.0.1:9"), module="sourced_answers.quickstart")
    assert result.returncode == 2 and "bash quickstart.sh -h 查看用法" in result.stderr


@pytest.mark.slow
def test_quickstart_verify_with_a_judge_adds_no_question(tmp_path, model_server):
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps({"answer": "NAS 要看盘位。[1]", "sources": [{"text": "NAS 要看盘位。"}]},
                                ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--judge", "judge-yes", "--judge-all",
                     env=cli_env(None, model_server), module="sourced_answers.quickstart")
    assert result.returncode == 0, result.stderr
    assert "模拟秘塔" not in result.stderr and "评判模型：judge-yes" in result.stdout


def test_verify_with_a_judge_fits_the_judge_prompt_to_the_given_context_window(tmp_path, model_server):
    from sourced_answers.model.prompts import JUDGE_MAX_TOKENS, prompt_tokens
    source = "RAID 1 mirrors data across two drives. " + "Unrelated text about cooking pasta and sauces. " * 200
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps({"answer": "RAID 1 mirrors data across two drives [1].",
                                 "sources": [{"text": source}]}), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--judge", "judge-yes", "--judge-all", "--context-window", "512",
                     env=cli_env(None, model_server))
    assert result.returncode == 0, result.stderr
    asked = [r["body"]["messages"] for r in model_server.requests if r["body"]["model"] == "judge-yes"]
    assert asked and all(prompt_tokens(messages) + JUDGE_MAX_TOKENS <= 512 for messages in asked)
    assert all("RAID 1 mirrors data across two drives." in messages[0]["content"] for messages in asked)


@pytest.mark.slow
@pytest.mark.parametrize("module", ["sourced_answers.cluster", "sourced_answers.local_model"])
def test_the_other_entry_points_have_a_version_too(module):
    done = subprocess.run([sys.executable, "-m", module, "--version"], cwd=HERE, env=cli_env(), capture_output=True,
                          text=True, encoding="utf-8", timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout == f"python -m {module} {__version__}\n", done.stderr


@pytest.mark.slow
def test_quickstart_with_an_empty_question_says_so_before_starting_anything():
    result = run_cli("", env=cli_env(OLLAMA_URL="http://127.0.0.1:9"), module="sourced_answers.quickstart")
    assert result.returncode == 2 and "请给出要问的问题" in result.stderr
    assert "模拟秘塔" not in result.stderr and "llama.cpp" not in result.stderr


@pytest.mark.slow
def test_quickstart_verify_with_a_judge_elsewhere_starts_no_local_model(tmp_path, model_server):
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps({"answer": "NAS 要看盘位。[1]", "sources": [{"text": "NAS 要看盘位。"}]},
                                ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--judge", "judge-yes", "--judge-all", "--judge-url", model_server.url,
                     env=cli_env(OLLAMA_URL="http://127.0.0.1:9"), module="sourced_answers.quickstart")
    assert result.returncode == 0, result.stderr
    assert "llama.cpp" not in result.stderr and "评判模型：judge-yes" in result.stdout


def readme_line(marker):
    """README 的“日常使用”里写着 marker 的那一行命令：参数（去掉前面的 .venv/bin/python answer_with_sources.py
    和行尾的注释）。"""
    import shlex
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    block = readme.split("## 日常使用", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    [line] = [line for line in block.splitlines() if marker in line]
    words = shlex.split(line, comments=True)
    assert words[:2] == [".venv/bin/python", "answer_with_sources.py"]
    return words[2:]


def test_the_readme_demo_line_works_on_a_machine_without_ollama(bundled_is_scripted):
    """新用户照抄 README 里 --demo 的那一行：这台机器上没有 Ollama（OLLAMA_URL 指向一个没人听的端口），
    以前是“连不上模型服务”、退出码 3（quickstart 悄悄加了 --local-model，README 的那一行没有）。"""
    args = readme_line("--demo")
    result = run_cli(*args, env=cli_env(OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode in (0, 1), result.stderr
    assert "\n来源：\n[1] " in result.stdout and "引用核对" in result.stdout
