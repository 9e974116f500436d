"""--allow-origin：浏览器在 Origin 头里写的网页来源。哪些值能写、怎样写成浏览器发的样子，以及 null 要有服务的密钥。

Origin: null 不是哪一个网页：沙箱里的 iframe、data: 和 file: 打开的页面、Electron 从文件加载的桌面程序都发它。
允许了 null 却不设 ANS_SERVER_KEY，随便哪个网页放一个沙箱 iframe 就能调用这个服务、花你的搜索费，所以这时是用法错误。
设置了密钥时，预检（OPTIONS，浏览器发的时候不带 Authorization）照样回答，之后真正的请求要带着密钥（servers/guard.py）。
"""
import re
from collections.abc import Sequence

from sourced_answers.core.environment import ANS_SERVER_KEY
from sourced_answers.core.errors import UsageError
from sourced_answers.core.strings import literal

ORIGIN = re.compile(r"(https?)://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?/?")
DEFAULT_PORTS = {"http": "80", "https": "443"}
NULL = "null"


def origin_of(value: str) -> str:
    """--allow-origin 的值 → 浏览器在 Origin 头里写的样子：http://localhost:3000（小写，默认端口不写，末尾没有 /）；
    桌面程序（Electron 从文件加载的页面）发的是 null。别的写法（带路径、没有协议）是用法错误。"""
    text = value.strip()
    if text.lower() == NULL:
        return NULL
    found = ORIGIN.fullmatch(text)
    if not found or (found[3] and not 0 < int(found[3]) <= 65535):
        raise UsageError(f"--allow-origin 的值“{literal(value)}”不是一个网页来源：要写成 协议://主机[:端口]"
                         "（http://localhost:3000、https://chat.example.com），或者 null（桌面程序）")
    scheme, host, port = found[1].lower(), found[2].lower(), found[3]
    return f"{scheme}://{host}" + (f":{port}" if port and port != DEFAULT_PORTS[scheme] else "")


def allowed_origins(values: Sequence[str] | None, server_key: str) -> tuple[str, ...]:
    """每个 --allow-origin 的值整理成浏览器写的样子（去掉重复的）。null 只在设置了 ANS_SERVER_KEY（server_key）
    时能写。"""
    origins = tuple(dict.fromkeys(origin_of(value) for value in values or ()))
    if NULL in origins and not server_key:
        raise UsageError(f"--allow-origin null 会让任何网页进来：沙箱里的 iframe、data: 和 file: 打开的页面发的也是 "
                         f"Origin: null。请先设置 {ANS_SERVER_KEY.name}（至少 16 个字符的随机串），在桌面聊天程序里把它"
                         "填作 API 密钥：这样每个请求都要带着它")
    return origins
