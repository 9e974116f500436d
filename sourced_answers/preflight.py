"""付费之前先检查：地址写得对不对、模型服务在不在、模型下载了没有。

每次搜索和读取都花秘塔的积分；模型服务没启动、模型没下载、地址写错这类错误要在第一次请求秘塔之前发现。
  · 地址：http 或 https，主机名有效；“host:port”没写协议时当作 http://host:port（和 Ollama 的 OLLAMA_HOST 一样）；
  · 模型：GET /v1/models（Ollama、llama.cpp server、vLLM、LM Studio 都有）。连不上 → 和对话时一样的“ollama serve”错误；
    列表里没有这个模型、而服务是 Ollama（/api/version 有回答）→ “ollama pull 名字”错误。
    llama.cpp 的服务只列出模型文件、接受任何名字：不是 Ollama 时只检查服务在不在。
    这个接口报错或者返回的样子不认识，不算失败，照常往下走。
"""
import re
from urllib.parse import urlsplit

from sourced_answers.model_client import ModelError, ModelUnreachable, chat_url

TIMEOUT = 3
HOST = re.compile(r"[A-Za-z0-9._:-]+")  # 主机名、IPv4 或（去掉方括号的）IPv6


class ConfigError(Exception):
    """地址之类的配置写错了（退出码 2）。"""


def normalize_url(value, name):
    """检查一个服务地址，返回规范的写法；name 是环境变量或参数的名字，出错时写进说明（值里不会有密钥）。"""
    text = value.strip()
    if "://" not in text:
        text = "http://" + text  # host:port
    parts = urlsplit(text)
    problem = None
    if parts.scheme.lower() not in ("http", "https"):
        problem = f"只支持 http 和 https，不支持 {parts.scheme}"
    elif not parts.hostname or not HOST.fullmatch(parts.hostname) or parts.hostname.startswith(("-", ".")):
        problem = "主机名无效"
    else:
        try:
            parts.port
        except ValueError:
            problem = "端口无效"
    if problem or parts.username or parts.password:
        problem = problem or "地址里不要写用户名和密码"
        shown = re.sub(r"//[^/@]*@", "//***@", value)  # 地址里的用户名和密码不显示
        raise ConfigError(f"{name} 的值“{shown}”不是有效的服务地址：{problem}（例如 http://127.0.0.1:11434）")
    return text.rstrip("/")


def ollama_name(name):
    """Ollama 解析模型名的方式：没写标签就是 :latest。"""
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def listed_models(data):
    """/v1/models 的回答里的模型名；样子不认识时返回 None。"""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return {item["id"] for item in data["data"] if isinstance(item, dict) and isinstance(item.get("id"), str)}


def check_models(base_url, models, role="模型"):
    """付费之前确认模型服务在、模型都在。连不上抛 ModelUnreachable，确定缺模型抛 ModelError；别的情况照常往下走。"""
    import requests
    root = chat_url(base_url).rsplit("/v1/", 1)[0]
    try:
        response = requests.get(root + "/v1/models", timeout=TIMEOUT)
    except requests.ConnectionError:
        raise ModelUnreachable(f"连不上{role}服务 {chat_url(base_url)}（{role} {'、'.join(models)}）。请先启动它：ollama serve"
                               f"（或把 OLLAMA_URL 设成你的 OpenAI 兼容服务地址）") from None
    except requests.RequestException:
        return  # 超时之类：不确定，交给真正的请求去判断
    try:
        listed = listed_models(response.json()) if response.status_code == 200 else None
    except ValueError:
        listed = None
    if listed is None:
        return
    missing = [m for m in models if m not in listed and ollama_name(m) not in {ollama_name(x) for x in listed}]
    if not missing or not is_ollama(root):
        return
    names = "、".join(missing)
    pulls = "；".join(f"ollama pull {m}" for m in missing)
    raise ModelError(f"{role}服务 {base_url} 里没有{role} {names}。请先运行：{pulls}"
                     f"（已有的模型：{'、'.join(sorted(listed)) or '无'}）")


def is_ollama(root):
    import requests
    try:
        response = requests.get(root + "/api/version", timeout=TIMEOUT)
        return response.status_code == 200 and "version" in response.json()
    except (requests.RequestException, ValueError):
        return False
