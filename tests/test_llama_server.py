"""端到端：真实的命令行 + 模拟秘塔 + 真实的模型服务（llama.cpp 跑 SmolLM2-135M）。

模型写什么我们管不了，所以这里只断言结构和行为：输出的形状、退出码和 JSON 一致、
--verify 对保存下来的结果给出同样的结论、流式和非流式都能走通、任何回答都不会让程序崩溃。
"""
import json
import time

import pytest

from fake_metaso import ENGLISH_PAGES, FakeMetaso
from sourced_answers.checker.types import PROBLEM_KINDS
from sourced_answers.model.preflight import probe_models
from tests.support import cli_env, eval_table, run_cli

# 自己启动自带模型的测试（--local-model、quickstart）只用一个核：见 conftest.py 的 one_core
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_core")]
# 用 real_model 夹具的测试共用一个 llama.cpp（几个 xdist 进程也只起一个，见 conftest.py）：llama.cpp 留着用过的提示词，
# 英文的几个问题用的是同样的资料，提示词只有最后的问题不同，第一个读完，后面的几乎不用读（--eval 的第一个问题也是它）。
# 自己启动服务的测试（--local-model、quickstart）各起各的

ENGLISH_QUESTIONS = ["How should I choose a home NAS?", "Is RAID a backup?", "How many disks does RAID 5 need?"]
FAST = ["--read", "2", "--max-chars", "700", "--max-tokens", "40"]


@pytest.fixture
def english_metaso():
    with FakeMetaso(ENGLISH_PAGES) as fake:
        yield fake


def run_real(fake, real_model, *args):
    env = cli_env(fake, real_model, ANS_MODEL=real_model.model)
    return run_cli(*args, *FAST, env=env)


def assert_text_shape(result):
    assert result.returncode in (0, 1), result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("✗")], result.stderr  # 没有报错
    answer, _, rest = result.stdout.partition("\n来源：\n")
    assert answer.strip(), result.stdout
    assert rest.count("http://127.0.0.1:") == 5
    verdict = rest.rstrip().split("\n\n")[-1]
    if result.returncode == 0:
        assert verdict == "✓ 引用核对通过"
    else:
        assert verdict.startswith("⚠ 引用核对没通过，请人工核对：\n  ")


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_english_text_output(english_metaso, real_model, mode):
    assert_text_shape(run_real(english_metaso, real_model, ENGLISH_QUESTIONS[0], mode))


def test_chinese_text_output(fake_metaso, real_model):
    # 中文网页一个汉字两三个 token：每页只读 250 个字，提示词一千多个 token，形状和长的一样。流式、非流式在同一个
    # 测试里接着问（同一段 real_model 的独占时间）：第二次从 llama.cpp 留着的提示词接着读，不用再读好几秒
    env = cli_env(fake_metaso, real_model, ANS_MODEL=real_model.model)
    for mode in ("--stream", "--no-stream"):
        assert_text_shape(run_cli("家用 NAS 怎么选", mode, *FAST, "--max-chars", "250", env=env))


@pytest.mark.parametrize("question", ENGLISH_QUESTIONS)
def test_json_exit_code_and_verify_agree(english_metaso, real_model, question, tmp_path):
    result = run_real(english_metaso, real_model, question, "--json")
    assert result.returncode in (0, 1), result.stderr
    data = json.loads(result.stdout)
    assert data["answer"].strip() and data["model"] == real_model.model
    assert (result.returncode == 0) == data["passed"] == (data["problems"] == [])
    # 小模型会写出核对认得的任何一种问题（--max-tokens 40 常常截断）；没请评判模型，回答也不是空的，这两种不该有
    expected = set(PROBLEM_KINDS) - {"judge_unsupported", "empty_answer"}
    assert {p["kind"] for p in data["problems"]} <= expected, data["problems"]
    saved = tmp_path / "run.json"
    saved.write_text(result.stdout, encoding="utf-8")
    verified = run_cli("--verify", str(saved), "--json", env=cli_env())
    assert verified.returncode == result.returncode
    assert json.loads(verified.stdout) == data


def test_streamed_answer_is_the_checked_answer(english_metaso, real_model, tmp_path):
    # llama.cpp 复用上一次的提示词缓存，同一个问题两次的回答可能不同；所以只看这一次流式运行本身：
    # 把它显示出来的回答拿去 --verify，结论必须和这次运行打印的一字不差
    streamed = run_real(english_metaso, real_model, ENGLISH_QUESTIONS[1], "--stream")
    assert_text_shape(streamed)
    answer, _, rest = streamed.stdout.partition("\n\n来源：\n")
    sources = json.loads(run_real(english_metaso, real_model, ENGLISH_QUESTIONS[1], "--json").stdout)["sources"]
    saved = tmp_path / "shown.json"
    saved.write_text(json.dumps({"answer": answer, "sources": sources}, ensure_ascii=False), encoding="utf-8")
    verified = run_cli("--verify", str(saved), env=cli_env())
    assert verified.returncode == streamed.returncode
    assert verified.stdout.split("\n来源：\n")[1].rstrip("\n") == rest.rstrip("\n")


def test_eval_table_from_the_real_model(real_model):
    from tests.support import HERE
    env = cli_env(None, real_model)
    result = run_cli("--demo", "--demo-pages", "nas-en", "--eval", str(HERE / "questions" / "questions_en.txt"),
                     "--models", real_model.model, *FAST, env=env)
    assert result.returncode in (0, 1), result.stderr
    (model, cells), = eval_table(result.stdout).items()
    assert model == real_model.model and cells["问题"] == "5" and cells["出错"] == "0"
    assert float(cells["token/秒"]) > 0


def test_the_installed_command_runs_the_bundled_model_with_local_model():
    """pip install 之后不靠 quickstart：--local-model 自己启动 llama.cpp、回答、核对，结束时关掉服务。"""
    from sourced_answers.model.llama_server import server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    env = cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9")  # Ollama 不在也没关系
    result = run_cli("How should I choose a home NAS?", "--demo", "--local-model", "--read", "0",
                     "--max-tokens", "60", "--json", env=env)
    assert result.returncode in (0, 1), result.stderr
    record = json.loads(result.stdout)
    assert record["model"] == "smollm2-135m" and record["answer"]
    assert "本机模型服务在 http://127.0.0.1:" in result.stderr and "页面 nas-en" in result.stderr


def test_eval_with_the_bundled_model_does_not_warn_about_names_it_chose_itself(tmp_path):
    """--eval --local-model：请求的名字和服务报告的名字都是本程序定的，不该提醒“名字不一样”；
    served_model 是模型的名字，不是 .venv 里模型文件的完整路径。"""
    from sourced_answers.model.llama_server import MODEL_NAME, server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    questions = tmp_path / "q.txt"
    questions.write_text("How should I choose a home NAS?\n", encoding="utf-8")
    env = cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9")
    result = run_cli("--demo", "--eval", str(questions), "--local-model", "--read", "0", "--max-tokens", "20",
                     "--json", env=env)
    assert result.returncode in (0, 1), result.stderr
    assert "⚠ 请求的模型是" not in result.stderr and "都是" not in result.stderr
    assert ".gguf" not in result.stdout + result.stderr and "site-packages" not in result.stdout + result.stderr
    assert json.loads(result.stdout)["served_model"] == MODEL_NAME


def test_quickstart_falls_back_to_the_bundled_model_for_an_english_question():
    from sourced_answers.model.llama_server import server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    env = cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9")
    # 要看的是改用自带模型、照样有来源：回答写 20 个 token 就够（小模型每个 token 都要几十毫秒）。
    # 中文问题不会走到这里（改用摘录，见 tests/test_excerpts.py）
    result = run_cli("How should I choose a home NAS?", "--max-tokens", "20", env=env,
                     module="sourced_answers.quickstart")
    assert result.returncode in (0, 1), result.stderr
    assert "改用本机的 llama.cpp + SmolLM2-135M" in result.stderr
    assert "改用摘录" not in result.stderr and "只会英文，中文问题的回答会很差" not in result.stderr
    assert "\n来源：\n" in result.stdout


def test_local_model_warns_once_that_it_is_english_only():
    from sourced_answers.model.llama_server import server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    # 用户自己选了 --local-model 又问中文：照样回答，但说一次这个模型只会英文、该装什么
    # 要看的只是警告说了一次：一条搜索结果就够（中文的摘要一个字两三个 token，五条要读十几秒）
    env = cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9")
    result = run_cli("家用 NAS 怎么选", "--demo", "--local-model", "--read", "0", "--size", "1",
                     "--max-tokens", "20", env=env)
    assert result.returncode in (0, 1), result.stderr
    warnings = [line for line in result.stderr.splitlines() if "只会英文，中文问题的回答会很差" in line]
    assert len(warnings) == 1 and "ollama pull qwen2.5:1.5b" in warnings[0], result.stderr


def test_a_model_file_that_does_not_load_is_a_clear_error_with_the_server_log(tmp_path):
    from sourced_answers.core.errors import LocalModelError
    from sourced_answers.model.llama_server import LocalModelServer, server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    with pytest.raises(LocalModelError) as error:
        LocalModelServer(model_path=str(broken), startup_seconds=60).start()
    assert "llama.cpp 服务没有启动" in str(error.value)
    assert "broken.gguf" in str(error.value)  # 带上服务自己的日志，说明为什么


def test_the_server_process_ends_with_its_owner(real_model):
    from sourced_answers.model.llama_server import LocalModelServer
    server = LocalModelServer().start()
    process = server.process
    assert requests_ok(server.url)
    server.close()
    assert process.poll() is not None
    assert not requests_ok(server.url)


def requests_ok(url):
    return probe_models(url, timeout=10).answered


@pytest.mark.slow
def test_ctrl_c_while_the_local_model_starts_leaves_no_server_behind():
    """Ctrl-C（发给整个进程组，像终端那样）在 --local-model 启动服务的各个时刻：退出码 130，没有留下 llama.cpp。
    三个时刻都按标准错误上说到哪一步来定（不是等固定的秒数）：刚开始启动服务、服务起来了、正在请它回答。"""
    import os
    import queue
    import signal
    import subprocess
    import threading
    import uuid
    from pathlib import Path

    from sourced_answers.model.llama_server import server_installed
    from tests.support import HERE, cli_command
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")

    def marked(mark: str) -> list[int]:
        """环境里带着这个记号的进程（子进程继承环境：父进程结束后被收养的服务也找得到）。"""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if mark.encode() in (entry / "environ").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    continue
        return found

    def pump(stream, lines: "queue.Queue[str | None]") -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def said(lines: "queue.Queue[str | None]", text: str) -> str:
        """从读标准错误的线程拿行，直到有一行说了 text（最多 60 秒，只防卡死）；返回读到的。不在管道上 select：
        文字模式的 readline 会把后面几行一起读进缓冲，管道空了 select 就一直等下去，而那几行已经在缓冲里。"""
        read = ""
        while text not in read:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                pytest.fail(f"60 秒没有等到“{text}”：{read}")
            assert line is not None, read
            read += line
        return read

    for moment in ("正在本机启动 llama.cpp", "本机模型服务在", "请模型 smollm2-135m 回答"):
        mark = f"ANS_TEST_MARK={uuid.uuid4()}"
        env = cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9", ANS_TEST_MARK=mark.split("=", 1)[1])
        process = subprocess.Popen(cli_command("--local-model", "--demo", "How should I choose a home NAS?"),
                                   env=env, cwd=HERE, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=pump, args=(process.stderr, lines), daemon=True)
        reader.start()
        before = said(lines, moment)
        os.killpg(process.pid, signal.SIGINT)
        process.wait(60)
        reader.join(60)
        err = before + "".join(iter(lines.get_nowait, None))
        assert process.returncode == 130 and "已中断" in err and "Traceback" not in err, (moment, err)
        deadline = time.monotonic() + 15
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = marked(mark)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert left == [], moment


@pytest.mark.slow
def test_local_model_keeps_to_the_timeout_including_its_start():
    """--timeout 算上启动本机模型的时间；超时之后不等 llama.cpp 把没人要的回答生成完。"""
    from sourced_answers.model.llama_server import server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    started = time.monotonic()
    result = run_cli("How should I choose a home NAS?", "--demo", "--local-model", "--timeout", "4",
                     "--max-tokens", "2000", "--no-stream", env=cli_env(None, None, OLLAMA_URL="http://127.0.0.1:9"))
    took = time.monotonic() - started
    assert result.returncode == 3 and "超过了总时限 4 秒（--timeout）" in result.stderr, result.stderr
    # 只能按墙上时间判断“没等它生成完”，所以界放得很宽：这台机器上把 2000 个 token 生成完要几分钟，30 秒里
    # 留足了机器忙时解释器启动、结束 llama.cpp 的时间，又远远不够等它生成完
    assert took < 30, took


def test_local_model_counts_tokens_with_its_own_tokenizer_so_chinese_pages_fit():
    """自带的 SmolLM2 一个汉字要两三个 token：按一字一个估，中文网页的提示词会超出它的上下文、被拒绝（退出码 3）。
    启动时用它的分词器量出比例，提示词按这个比例缩短资料。"""
    from sourced_answers.model.llama_server import server_installed
    if not server_installed():
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    from fake_metaso import NAS_PAGES
    pages = [{**page, "text": page["text"] * 12} for page in NAS_PAGES]  # 每页三四千个字的中文网页
    with FakeMetaso(pages) as fake:
        result = run_cli("家用 NAS 怎么选", "--local-model", "--context-window", "1024", "--max-tokens", "20",
                         "--json", env=cli_env(fake, None, OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode in (0, 1), result.stderr
    assert "回答的提示词放不下模型的上下文窗口 1024" in result.stderr


def test_the_token_rate_falls_back_to_a_cautious_one_without_a_tokenizer():
    from sourced_answers.model.local_serving import FALLBACK_RATE, measured_rate
    assert measured_rate("http://127.0.0.1:9") == FALLBACK_RATE
