"""模型服务的地址只在这里变成接口的地址：预检（GET …/models）、回答、--fix 的改写、评判、--eval、quickstart
的探测，全都从 api_base 的结果接上接口的路径，所以预检查的就是之后要用的那一个地址。

api_base 把用户写的地址变成“接口前缀”（OpenAI SDK 的 base_url）：对话是前缀加 /chat/completions，模型列表是
前缀加 /models。
  · 末尾贴了接口本身（/chat/completions、/v1/chat、/models、Ollama 自己的 /api/chat 这类）：去掉；
  · 末尾是 Ollama 自己的接口前缀 /api：它的 OpenAI 兼容接口在同一层的 /v1；
  · 最后一段是版本号（v1、v3、v4……，大小写都行）：这就是前缀（网关、云端服务常在某个路径下面：
    /openai/v1、/compatible-mode/v1、/api/v1、/api/paas/v4）；
  · 别的（只写了主机和端口，或者一个不带版本号的路径）：后面加 /v1。
对同一个地址做两次结果不变（api_base(api_base(x)) == api_base(x)），所以谁拿到的是已经整理过的地址都没关系。
地址本身对不对（协议、主机名、端口）由 api/config.py 检查；这里只管路径。
"""
import re
from urllib.parse import urlsplit

VERSION = re.compile(r"v\d+[a-z0-9]*", re.IGNORECASE)  # v1、v3、v4、v1beta
# Ollama 自己的接口（/api/chat、/api/tags……）：贴的是它们时，去掉这一段，剩下 /api
OLLAMA_NATIVE = frozenset({"chat", "generate", "tags", "version", "ps", "show", "embed", "embeddings", "pull"})


def api_base(url: str) -> str:
    """模型服务的地址 → 接口前缀（见模块说明）。末尾的斜杠、接口路径的大小写都不要紧。"""
    text = url.strip()
    if not text:
        return ""  # --local-model：本机的服务还没启动，地址还不知道
    parts = urlsplit(text if "://" in text else "http://" + text)
    segments = [segment for segment in parts.path.split("/") if segment]
    lower = [segment.lower() for segment in segments]
    if lower[-2:] == ["chat", "completions"]:
        del segments[-2:]
    elif lower[-1:] == ["models"] or (lower[-1:] == ["completions"] and is_version(lower[-2:-1])):
        del segments[-1:]
    elif len(lower) >= 2 and lower[-2] == "api" and lower[-1] in OLLAMA_NATIVE:
        del segments[-1:]
    elif lower[-1:] == ["chat"] and is_version(lower[-2:-1]):
        del segments[-1:]
    if segments and segments[-1].lower() == "api":
        segments[-1] = "v1"
    elif segments and VERSION.fullmatch(segments[-1]):
        segments[-1] = segments[-1].lower()
    else:
        segments.append("v1")
    return f"{parts.scheme.lower()}://{parts.netloc}/" + "/".join(segments)


def is_version(segments: list[str]) -> bool:
    return bool(segments) and VERSION.fullmatch(segments[0]) is not None


def chat_url(base_url: str) -> str:
    """对话接口的地址。"""
    return api_base(base_url) + "/chat/completions"


def models_url(base_url: str) -> str:
    """模型列表的地址（预检用它）。"""
    return api_base(base_url) + "/models"


def server_root(base_url: str) -> str:
    """服务本身的地址：接口前缀去掉最后的版本号（Ollama 的 /api/version 在这一层）。"""
    base = api_base(base_url)
    return base.rsplit("/", 1)[0]


def shorter_bases(base_url: str) -> list[str]:
    """地址写错时可能对的几个接口前缀：版本号换成 v1，再把路径一段一段地往上退，每一层都试 /v1（最多三个，
    从长到短）。只在预检发现这个地址不是模型服务时用来给出建议。"""
    base = api_base(base_url)
    scheme, rest = base.split("://", 1)
    host, *segments = rest.split("/")
    found = [f"{scheme}://{host}/" + "/".join([*segments[:-1], "v1"])]
    segments = segments[:-1]  # 最后一段是版本号
    while segments and len(found) < 3:
        segments.pop()
        found.append(f"{scheme}://{host}/" + "/".join([*segments, "v1"]))
    return [candidate for candidate in found if candidate != base]
