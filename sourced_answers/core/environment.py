"""本程序读的每一个环境变量都在这里登记一次：名字、给用户看的含义、没设置时怎样。

读环境变量的代码用这里的名字（METASO_API_KEY.name），docs/reference.md 的环境变量表由它生成
（python -m sourced_answers.cli.reference_doc）；tests/test_environment.py 读代码，找出每一个读环境的地方，
和这里对照：多一个、少一个都会失败。缓存目录由 XDG_CACHE_HOME、HOME 决定的那条规矩（cache_directory）也写在这里：
建设置时读一次，--verify 这样不搜索的路不必为它导入秘塔的缓存。"""
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sourced_answers.core.settings import DEFAULT_METASO_BASE, DEFAULT_MODEL, DEFAULT_OLLAMA_URL, MAX_KEY_LENGTH


@dataclass(frozen=True)
class Variable:
    """一个环境变量。meaning、default 是给用户看的中文（Markdown），default 说没设置时怎样。"""
    name: str
    meaning: str
    default: str


METASO_API_KEY = Variable(
    "METASO_API_KEY",
    "秘塔开放平台的 API Key。**只从环境变量读取**，不会出现在任何输出里（夹着零宽字符之类被回显出来也遮掉）；"
    "必须是可打印的 ASCII、中间没有空白或控制字符、至少 16 个字符、"
    f"最多 {MAX_KEY_LENGTH} 个字符（不对时发出任何请求之前就报错）",
    "无（`--demo`、`--verify` 不需要）")
METASO_BASE = Variable(
    "METASO_BASE", "秘塔 API 地址（末尾多贴了 `/search`、`/reader` 也可以）", f"`{DEFAULT_METASO_BASE}`")
OLLAMA_URL = Variable(
    "OLLAMA_URL",
    "OpenAI 兼容模型服务的地址（Ollama、llama.cpp server、网关、云端服务）；末尾带 `/api`、`/v1`、`/v1/chat`、"
    "`/v1/chat/completions` 也可以，最后一段是 `v1`、`v4` 这样的版本号时原样当作接口前缀（网关在某个路径下面也行），"
    "只写 `主机:端口` 时当作 http；预检和每一次对话用同一个整理过的地址，写错时付费之前就说该写哪个",
    f"`{DEFAULT_OLLAMA_URL}`")
ANS_MODEL = Variable("ANS_MODEL", "模型名（`--model` 优先）", f"`{DEFAULT_MODEL}`")
ANS_API_KEY = Variable(
    "ANS_API_KEY",
    "模型服务的 API Key（llama-server `--api-key`、vLLM `--api-key`、网关、云端服务）。只以 "
    "`Authorization: Bearer` 发给 `OLLAMA_URL` 的服务，从不发给秘塔或别处；不会出现在任何输出里；可打印的 ASCII、"
    f"中间没有空白，至少 8 个字符、最多 {MAX_KEY_LENGTH} 个字符",
    "无（Ollama 不需要）")
ANS_JUDGE_API_KEY = Variable(
    "ANS_JUDGE_API_KEY",
    "`--judge-url` 指向另一个服务时，那个服务的 API Key（`ANS_API_KEY` 不会发给它）；和 `ANS_API_KEY` 一样是"
    f"可打印的 ASCII、至少 8 个字符、最多 {MAX_KEY_LENGTH} 个字符", "无")
ANS_SERVER_KEY = Variable(
    "ANS_SERVER_KEY",
    "`--serve` 的服务自己的 API Key：设置了就每个请求都要带 `Authorization: Bearer 这个值`（不对或没带是 401）；"
    "`--serve` 监听本机以外的地址时必须设置。和别的密钥一样不会出现在任何输出里；可打印的 ASCII、中间没有空白，"
    f"至少 16 个字符、最多 {MAX_KEY_LENGTH} 个字符", "无（只听本机时可以不设）")
XDG_CACHE_HOME = Variable(
    "XDG_CACHE_HOME", "缓存放在它下面的 `answer-with-sources/`；必须是绝对路径（相对路径按 XDG 的规定不算数）",
    "`~/.cache`")
HOME = Variable(
    "HOME",
    "家目录：`XDG_CACHE_HOME` 没设置时，缓存放在 `$HOME/.cache/answer-with-sources/`；连它也不是绝对路径时不用缓存",
    "系统给的家目录")

# 文档里的顺序
VARIABLES = (METASO_API_KEY, METASO_BASE, OLLAMA_URL, ANS_MODEL, ANS_API_KEY, ANS_JUDGE_API_KEY, ANS_SERVER_KEY,
             XDG_CACHE_HOME, HOME)


def cache_directory(environ: Mapping[str, str]) -> Path | None:
    """秘塔缓存的目录：$XDG_CACHE_HOME/answer-with-sources，没设置时 ~/.cache/answer-with-sources（建设置时读一次）。
    按 XDG 的规定，相对路径的 XDG_CACHE_HOME 不算数；连家目录也找不到（不是绝对路径）时返回 None：
    不用缓存，绝不在当前目录里建文件夹。"""
    base = Path(environ.get(XDG_CACHE_HOME.name, "").strip())
    if not base.is_absolute():
        home = Path(environ.get(HOME.name, "").strip() or os.path.expanduser("~"))
        if not home.is_absolute():
            return None
        base = home / ".cache"
    return base / "answer-with-sources"
