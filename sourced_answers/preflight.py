"""付费之前先检查：地址写得对不对、模型服务在不在、模型下载了没有。

每次搜索和读取都花秘塔的积分；模型服务没启动、模型没下载、地址写错这类错误要在第一次请求秘塔之前发现。
  · 地址：http 或 https，主机名有效；“host:port”没写协议时当作 http://host:port（和 Ollama 的 OLLAMA_HOST 一样）；
  · 模型：GET /v1/models（Ollama、llama.cpp server、vLLM、LM Studio 都有）。连不上 → 和对话时一样的“ollama serve”错误；
    列表里没有这个模型、而服务是 Ollama（/api/version 有回答）→ “ollama pull 名字”错误。
    llama.cpp 的服务只列出模型文件、接受任何名字：不是 Ollama 时只检查服务在不在。
    这个接口报错或者返回的样子不认识，不算失败，照常往下走。
"""
from dataclasses import dataclass

from sourced_answers.config import Config
from sourced_answers.model_client import ModelError, ModelUnreachable, chat_url

TIMEOUT = 3


def ollama_name(name: str) -> str:
    """Ollama 解析模型名的方式：没写标签就是 :latest。"""
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def listed_models(data: object) -> set[str] | None:
    """/v1/models 的回答里的模型名；样子不认识时返回 None。"""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return {item["id"] for item in data["data"] if isinstance(item, dict) and isinstance(item.get("id"), str)}


def server_root(base_url: str) -> str:
    """模型服务的根地址：去掉 /v1 和 /v1/chat/completions。"""
    return chat_url(base_url).rsplit("/v1/", 1)[0]


@dataclass
class ModelList:
    """GET /v1/models 的结果。reachable：连上了；answered：回答了 200；models：列出的模型名（样子不认识时为 None）。"""
    reachable: bool
    answered: bool = False
    models: set[str] | None = None


def probe_models(base_url: str, timeout: float = TIMEOUT) -> ModelList:
    """问模型服务有哪些模型（Ollama、llama.cpp server、vLLM、LM Studio 都有 /v1/models）。这是唯一的探测方式。"""
    import requests
    try:
        response = requests.get(server_root(base_url) + "/v1/models", timeout=timeout)
    except requests.ConnectionError:
        return ModelList(reachable=False)
    except requests.RequestException:
        return ModelList(reachable=True)  # 超时之类：不确定，交给真正的请求去判断
    if response.status_code != 200:
        return ModelList(reachable=True)
    try:
        return ModelList(reachable=True, answered=True, models=listed_models(response.json()))
    except (ValueError, RecursionError, requests.RequestException):
        return ModelList(reachable=True, answered=True)


def check_models(base_url: str, models: list[str], role: str = "模型", timeout: float = TIMEOUT) -> None:
    """付费之前确认模型服务在、模型都在。连不上抛 ModelUnreachable，确定缺模型抛 ModelError；别的情况照常往下走。"""
    found = probe_models(base_url, timeout)
    if not found.reachable:
        raise ModelUnreachable(f"连不上{role}服务 {chat_url(base_url)}（{role} {'、'.join(models)}）。"
                               f"请先启动它：ollama serve（或把 OLLAMA_URL 设成你的 OpenAI 兼容服务地址）")
    listed = found.models
    if listed is None:
        return
    missing = [m for m in models if m not in listed and ollama_name(m) not in {ollama_name(x) for x in listed}]
    if not missing or not is_ollama(server_root(base_url), timeout):
        return
    names = "、".join(missing)
    pulls = "；".join(f"ollama pull {m}" for m in missing)
    raise ModelError(f"{role}服务 {base_url} 里没有{role} {names}。请先运行：{pulls}"
                     f"（已有的模型：{'、'.join(sorted(listed)) or '无'}）")


def is_ollama(root: str, timeout: float = TIMEOUT) -> bool:
    import requests
    try:
        response = requests.get(root + "/api/version", timeout=timeout)
        data = response.json() if response.status_code == 200 else None
        return isinstance(data, dict) and "version" in data
    except (requests.RequestException, ValueError, RecursionError):
        return False


def probe_timeout(config: Config) -> float:
    """预检每个请求的超时：平常 3 秒，--timeout 更短时按 --timeout。"""
    return min(TIMEOUT, config.timeout) if config.timeout else TIMEOUT


def check_before_paying(config: Config, models: list[str]) -> None:
    """第一次请求秘塔之前：回答和评判用的模型都在（连不上、没下载都在这里就报错）。地址在 Config 里已经检查过。"""
    check_models(config.model_url, models, timeout=probe_timeout(config))
    if config.judge:
        check_models(config.judge_url, [config.judge], role="评判模型", timeout=probe_timeout(config))
