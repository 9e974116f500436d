"""LocalModelServer 起的子进程：在这个进程里运行 xllamacpp 的服务（它活在创建它的进程里，往标准错误打很多日志）。

不是给人用的命令，没有写进任何帮助：父进程（model/llama_server.py）用 python -m sourced_answers.model.local_child
启动它，在标准输入的第一行交给它一个 JSON 对象（模型文件、上下文窗口、线程数、要不要缓存提示词、密钥——密钥不放在
命令行里，ps 看不见）。它把服务的地址写在标准输出的第一行，等父进程关掉标准输入后退出。

有人从命令行直接运行它、或者喂给它别的东西：不报程序内部出错，而是一行中文说明、退出码 2（用法错误），
什么服务也不启动。
"""
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sourced_answers.core.errors import ChildSettingsError, ExitCode

# 自带模型服务能接受的范围（只写在这里：python -m sourced_answers.local_model serve 的参数也用它们）
CONTEXT_RANGE = (256, 131072)
THREAD_RANGE = (1, 256)
FIELDS = {"model_path", "model_name", "n_ctx", "threads", "batch_threads", "prompt_cache", "api_key"}
MAX_NAME = 200
NOT_FOR_PEOPLE = ("python -m sourced_answers.model.local_child 是自带模型服务内部用的子进程，不是给人用的命令。"
                  "要在前台运行自带的模型服务，请用：python -m sourced_answers.local_model serve")
# 标准输入的第一行最多读这么多字符（设置只有几个字段；一直没有换行的输入也不会把内存读满）
MAX_LINE = 65536


@dataclass(frozen=True)
class ChildSettings:
    model_path: str
    model_name: str
    n_ctx: int
    threads: int
    batch_threads: int
    prompt_cache: bool
    api_key: str


def whole_number(data: dict[str, Any], name: str, low: int, high: int) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ChildSettingsError(f"{name} 应是 {low} 到 {high} 之间的整数")
    return value


def parse_settings(line: str) -> ChildSettings:
    """标准输入第一行的 JSON → ChildSettings；哪里不对就抛 ChildSettingsError（说明里不含密钥）。"""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        raise ChildSettingsError("标准输入的第一行不是 JSON") from None
    if not isinstance(data, dict):
        raise ChildSettingsError("标准输入的第一行应是一个 JSON 对象")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ChildSettingsError(f"不认识的字段：{'、'.join(repr(name)[:40] for name in unknown[:5])}")
    path = data.get("model_path")
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ChildSettingsError("model_path 应是模型文件的路径")
    if not Path(path).is_file():
        raise ChildSettingsError("model_path 指的不是一个存在的文件")
    name = data.get("model_name", "")
    if not isinstance(name, str) or not name.isprintable() or len(name) > MAX_NAME:
        raise ChildSettingsError(f"model_name 应是一行不超过 {MAX_NAME} 个字符的文字")
    key = data.get("api_key", "")
    if not isinstance(key, str) or not key.isprintable() or any(char.isspace() for char in key):
        raise ChildSettingsError("api_key 应是不含空白和控制字符的文字")
    cache = data.get("prompt_cache", True)
    if not isinstance(cache, bool):
        raise ChildSettingsError("prompt_cache 应是 true 或 false")
    return ChildSettings(model_path=path, model_name=name, n_ctx=whole_number(data, "n_ctx", *CONTEXT_RANGE),
                         threads=whole_number(data, "threads", *THREAD_RANGE),
                         batch_threads=whole_number(data, "batch_threads", *THREAD_RANGE),
                         prompt_cache=cache, api_key=key)


def serve(settings: ChildSettings, stdin: IO[str]) -> int:
    """启动服务，报告地址，等父进程关掉标准输入后退出。起不来时返回退出码（日志在标准错误里，父进程拿去给人看）。"""
    try:
        import xllamacpp
    except ImportError:
        print("✗ 没有安装 xllamacpp（自带模型服务要它）", file=sys.stderr)
        return ExitCode.USAGE
    params = xllamacpp.CommonParams()
    params.model.path = settings.model_path
    if settings.model_name:
        # 服务报告的模型名（回答里的 model）：不然 llama.cpp 报告的是模型文件的完整路径
        params.model_alias = {settings.model_name}
    params.n_ctx = settings.n_ctx
    params.cpuparams.n_threads = settings.threads
    # 读提示词（一批 token 一起算）用所有的核；生成（一次一个 token）见 llama_server.default_threads
    params.cpuparams_batch.n_threads = settings.batch_threads
    if not settings.prompt_cache:
        params.cache_prompt = False
        params.cache_ram_mib = 0
    if settings.api_key:
        params.api_keys = [settings.api_key]
    try:
        server = xllamacpp.Server(params)
    except Exception as error:  # noqa: BLE001  模型文件不对、内存不够：说出来，由父进程报告（退出码 3）
        print(f"✗ llama.cpp 服务起不来：{type(error).__name__}: {str(error)[:300]}", file=sys.stderr)
        return ExitCode.SERVICE
    try:
        print(server.listening_address, flush=True)
        stdin.read()
    except OSError:
        pass  # 父进程已经不在了（管道断了）：一样结束
    finally:
        del server
        # 不等 llama.cpp 的线程：正常的解释器退出会等它们，服务就留下来了
        os._exit(ExitCode.PASSED)


def main(arguments: list[str], stdin: IO[str]) -> int:
    """设置只从标准输入来：命令行上有任何参数、标准输入是终端（有人手动运行）、设置不对，都是退出码 2。"""
    if arguments or stdin.isatty():
        print(f"✗ {NOT_FOR_PEOPLE}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        try:
            line = stdin.readline(MAX_LINE)
        except (ValueError, OSError):  # 不是 UTF-8 之类
            raise ChildSettingsError("标准输入读不了（应是 UTF-8 的一行 JSON）") from None
        settings = parse_settings(line)
    except ChildSettingsError as error:
        print(f"✗ 自带模型服务的子进程收到的设置不对：{error}。{NOT_FOR_PEOPLE}", file=sys.stderr)
        return ExitCode.USAGE
    return serve(settings, stdin)


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:], sys.stdin)
    except KeyboardInterrupt:
        code = ExitCode.INTERRUPTED
    sys.exit(code)
