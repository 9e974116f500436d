"""付费之前先检查：地址写得对不对、模型服务在不在、模型下载了没有。

每次搜索和读取都花秘塔的积分；模型服务没启动、模型没下载、地址写错这类错误要在第一次请求秘塔之前发现。
  · 地址：http 或 https，主机名有效；“host:port”没写协议时当作 http://host:port（和 Ollama 的 OLLAMA_HOST 一样）；
  · 模型：GET 接口前缀/models（Ollama、llama.cpp server、vLLM、LM Studio 都有）。接口前缀和之后对话用的是同一个
    （endpoints.api_base），所以查的就是要用的地址。连不上 → 和对话时一样的“ollama serve”错误；
    列表里没有这个模型、而服务是 Ollama（/api/version 有回答）→ “ollama pull 名字”错误。
    llama.cpp 的服务只列出模型文件、接受任何名字：不是 Ollama 时只检查服务在不在。
    回答 4xx（404、405……：这个地址上没有这个接口）或者回答的不是模型列表 → 地址写错了（退出码 2），往上一层一层地
    试几个可能对的地址，告诉用户该写哪一个；服务自己出错（5xx）、超时，不算失败，照常往下走。
"""
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from sourced_answers.core.errors import (
    ConfigError,
    DeadlineExceeded,
    ModelError,
    ModelNotFound,
    ModelUnreachable,
    out_of_time,
)
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import EXCERPTS, NO_KEY, ApiKey, JudgeSettings, ModelSettings
from sourced_answers.core.strings import json_value
from sourced_answers.model.endpoints import chat_url, models_url, server_root, shorter_bases

TIMEOUT = 3


def ollama_name(name: str) -> str:
    """Ollama 解析模型名的方式：没写标签就是 :latest。"""
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def listed_models(data: object) -> set[str] | None:
    """/v1/models 的回答里的模型名；样子不认识时返回 None。"""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return {item["id"] for item in data["data"] if isinstance(item, dict) and isinstance(item.get("id"), str)}


@dataclass
class ModelList:
    """GET /v1/models 的结果。reachable：连上了；status：HTTP 状态（没回答时为 None）；answered：回答了 200；
    models：列出的模型名（样子不认识时为 None）；accepts_any：llama.cpp 的服务只列出模型文件、接受任何名字。"""
    reachable: bool
    status: int | None = None
    models: set[str] | None = None
    accepts_any: bool = False
    message: str = ""

    @property
    def answered(self) -> bool:
        return self.status == 200

    @property
    def is_model_list(self) -> bool:
        """False：这个地址上确定没有模型列表——4xx（401、403 是密钥的事，408、429 是暂时的）或者 200 却不是列表。"""
        if self.status is not None and 400 <= self.status < 500:
            return self.status in (401, 403, 408, 429)
        return not (self.answered and self.models is None)


def probe_models(base_url: str, timeout: float = TIMEOUT, key: ApiKey = NO_KEY) -> ModelList:
    """问模型服务有哪些模型（Ollama、llama.cpp server、vLLM、LM Studio、网关和云端服务都有 /v1/models）。
    这是唯一的探测方式；有密钥时带上密钥（llama.cpp 的 --api-key 连这个接口也要密钥）。"""
    import requests  # HTTP 客户端只在真的探测时导入：--verify、--help 只用这个模块的 remote_notices、ollama_name

    from sourced_answers.model.model_client import model_error_message
    try:
        response = requests.get(models_url(base_url), timeout=timeout, headers=key.headers())
    except requests.ConnectionError:
        return ModelList(reachable=False)
    except requests.RequestException:
        return ModelList(reachable=True)  # 超时之类：不确定，交给真正的请求去判断
    if response.status_code != 200:
        return ModelList(reachable=True, status=response.status_code, message=model_error_message(response.text))
    try:
        data = json_value(response.text)
    except (ValueError, RecursionError, requests.RequestException):
        return ModelList(reachable=True, status=200)
    return ModelList(reachable=True, status=200, models=listed_models(data), accepts_any=is_llama_cpp(data))


def is_llama_cpp(data: object) -> bool:
    """llama.cpp 的模型列表：多一个 models 字段，或者 owned_by 是 llamacpp。它接受任何模型名。"""
    if not isinstance(data, dict):
        return False
    items = data.get("data")
    if not isinstance(items, list):
        items = []
    return "models" in data or any(isinstance(item, dict) and item.get("owned_by") == "llamacpp" for item in items)


def check_models(base_url: str, models: Sequence[str], role: str = "模型", timeout: float = TIMEOUT,
                 key: ApiKey = NO_KEY, setting: str = "OLLAMA_URL") -> None:
    """付费之前确认模型服务在、密钥对、是 OpenAI 兼容的服务、模型都在。连不上抛 ModelUnreachable；
    密钥被拒、确定缺模型抛 ModelError；/v1/models 不存在（404）或者回答的不是模型列表，说明地址不对（ConfigError，
    点名 setting）。服务自己出错（5xx）、超时照常往下走：交给真正的请求去判断。"""
    found = probe_models(base_url, timeout, key)
    if not found.reachable:
        raise ModelUnreachable(f"连不上{role}服务 {chat_url(base_url)}（{role} {'、'.join(models)}）。"
                               f"请先启动它：ollama serve（或把 {setting} 设成你的 OpenAI 兼容服务地址）")
    if found.status in (401, 403):
        from sourced_answers.model.model_client import key_error
        raise key_error(found.status, found.message, base_url, key)
    if not found.is_model_list:
        raise wrong_address(base_url, found, setting, timeout, key)
    listed = found.models
    if listed is None or found.accepts_any:
        return
    missing = [m for m in models if m not in listed]
    if not missing:
        return
    ollama = is_ollama(server_root(base_url), timeout)
    if ollama:  # 只有 Ollama 把没写标签的名字当作 :latest；别的服务只认一字不差的名字
        missing = [m for m in missing if ollama_name(m) not in {ollama_name(x) for x in listed}]
        if not missing:
            return
    names = "、".join(missing)
    known = "、".join(sorted(listed)[:20]) or "无"
    if ollama:
        pulls = "；".join(f"ollama pull {m}" for m in missing)
        raise ModelNotFound(f"{role}服务 {base_url} 里没有{role} {names}。请先运行：{pulls}（已有的模型：{known}）")
    raise ModelNotFound(f"{role}服务 {base_url} 里没有{role} {names}（它列出的模型：{known}）。"
                     f"请用 --model 或 ANS_MODEL 换一个它有的模型")


def wrong_address(base_url: str, found: ModelList, setting: str, timeout: float, key: ApiKey) -> ConfigError:
    """地址上没有 OpenAI 兼容的接口：说清查的是哪个地址、回答了什么；往上几层有模型列表时，直接说该写哪一个。"""
    what = f"回答 HTTP {found.status}" if found.status != 200 else "回答的不是模型列表"
    problem = f"{setting}（{base_url}）不像 OpenAI 兼容的模型服务：GET {models_url(base_url)} {what}"
    for candidate in shorter_bases(base_url):
        if probe_models(candidate, timeout, key).models is not None:
            return ConfigError(f"{problem}。模型服务在 {candidate}：请把 {setting} 设成 {candidate}")
    return ConfigError(f"{problem}。请写服务文档里给的地址：Ollama 是 http://127.0.0.1:11434，"
                       f"网关和云端服务通常以 /v1 结尾（例如 http://网关:3000/v1）")


def is_ollama(root: str, timeout: float = TIMEOUT) -> bool:
    import requests
    try:
        response = requests.get(root + "/api/version", timeout=timeout)
        data = json_value(response.text) if response.status_code == 200 else None
        return isinstance(data, dict) and "version" in data
    except (requests.RequestException, ValueError, RecursionError):
        return False


LOCAL_SUFFIXES = (".local", ".lan", ".home", ".internal", ".localdomain")


def is_local(url: str) -> bool:
    """地址是不是本机或局域网：回环、私有网段、链路本地的 IP；localhost；不带点的主机名和 .local、.lan 这类局域网名字。
    不做域名解析（别的主机名一律当作外面的服务）。"""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith(LOCAL_SUFFIXES)
    return address.is_loopback or address.is_private or address.is_link_local


def remote_notices(model_url: str | None, judge: JudgeSettings) -> list[str]:
    """模型服务不在本机或局域网时要说一次的话：问题和资料原文会发到那里。model_url 为 None：这次不问回答的模型
    （--verify）。"""
    urls = [] if model_url is None else [model_url]
    if judge.name:
        urls.append(judge.url)
    hosts = dict.fromkeys(urlsplit(url).hostname or url for url in urls if not is_local(url))
    return [f"注意：模型服务 {host} 不在本机或局域网，问题和资料原文会发送到那里" for host in hosts]


def probe_timeout(deadline: Deadline) -> float:
    """预检每个请求的超时：平常 3 秒，--timeout 剩下的时间更短时按剩下的（预检用的时间也算在 --timeout 里）。"""
    try:
        return deadline.timeout(TIMEOUT, TIMEOUT)[1]
    except DeadlineExceeded as error:
        raise out_of_time(ModelError(str(error))) from None


def check_before_paying(model: ModelSettings, models: Sequence[str], judge: JudgeSettings, deadline: Deadline) -> None:
    """第一次请求秘塔之前：回答和评判用的模型服务在、密钥对、模型都在。地址和密钥的格式在建设置时已经检查过。
    deadline：这次运行的总时限（预检的时间也算在里面）。摘录（EXCERPTS）不请模型写：只有它时不找回答模型的服务
    （命令行、--eval、--serve、--mcp 都经过这里）。"""
    asked = [name for name in models if name != EXCERPTS]
    if asked:
        check_models(model.url, asked, timeout=probe_timeout(deadline), key=model.key)
    check_judge(judge, model.url, deadline)


def check_judge(judge: JudgeSettings, model_url: str, deadline: Deadline) -> None:
    """用了 --judge 时：评判模型的服务在、密钥对、是 OpenAI 兼容的服务、模型在。"""
    if judge.name:
        setting = "--judge-url" if judge.url != model_url else "OLLAMA_URL"
        check_models(judge.url, [judge.name], role="评判模型", timeout=probe_timeout(deadline),
                     key=judge.key, setting=setting)
