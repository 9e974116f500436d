"""秘塔（Metaso）开放平台的最小客户端：post、search、read_page 和 MetasoError。

密钥由调用方传入（命令行程序在入口处从环境变量 METASO_API_KEY 读一次，见 api_key），永远不会出现在
输出、日志或错误信息里（即使服务器把请求头原样回显，错误信息里的密钥也会被遮掉）。

顶层的 metaso_search.py 是它的门（教程里的名字）：python metaso_search.py "问题" 打印一次完整的原始搜索响应。
"""
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sourced_answers.core.abandoning import stop_if_gone
from sourced_answers.core.environment import METASO_API_KEY, METASO_BASE
from sourced_answers.core.errors import DeadlineExceeded, MetasoError, MissingKeyError, out_of_time
from sourced_answers.core.masking import mask, mask_data
from sourced_answers.core.network import network_reason
from sourced_answers.core.retrying import Deadline, with_retries
from sourced_answers.core.secrets import METASO_MIN_LENGTH, check_secret
from sourced_answers.core.settings import DEFAULT_METASO_BASE, SEARCH_DEFAULTS
from sourced_answers.core.strings import excerpt, json_text, json_value, literal

DEFAULT_BASE = DEFAULT_METASO_BASE
# (连接超时, 读取超时)，单位秒；每个请求都有，另外还受总时限 --timeout 约束
DEFAULT_TIMEOUT = (5, 30)
# 暂时性的错误码：重试；其余错误码（密钥无效、余额不足、今日次数用完、参数错误……）重试也没用
TRANSIENT_CODES = {500, 5000}

# 已知错误码 → 用户下一步该做什么（见 shared/metaso-api.md）
NEXT_STEPS = {
    2005: "请检查 METASO_API_KEY 是否正确（在秘塔开放平台的 API Key 页面复制，以 mk- 开头）",
    3000: "账户余额不足，请到秘塔开放平台充值后再试",
    3003: "今天的调用次数已用完，请明天再试，或在秘塔开放平台提高额度",
    500: "秘塔服务器出错；读取网页时密钥无效也会得到这个错误，请先确认密钥正确，再稍后重试",
    5000: "秘塔服务内部错误，请稍后重试",
    1000: "请求参数有误，请检查问题和 --size 等参数",
}
HTTP_NEXT_STEPS = {
    401: "请检查 METASO_API_KEY 是否正确",
    403: "密钥没有权限调用这个接口，请检查 METASO_API_KEY 和开放平台上的权限",
    429: "请求太频繁，请稍等再试",
}


Timeout = tuple[float, float]
OnRetry = Callable[[str], None]


def api_key(environ: Mapping[str, str], required: bool = True) -> str:
    """密钥只在这里从环境变量读取（由程序入口调用）。required 时没设置或格式不对就报错（说明里不含密钥）；
    否则原样返回（没设置时是空字符串）。"""
    key = environ.get(METASO_API_KEY.name, "").strip()
    if required:
        if not key:
            raise MissingKeyError()
        check_secret(key, METASO_API_KEY.name, METASO_MIN_LENGTH,
                     "请重新从秘塔开放平台复制密钥，export METASO_API_KEY=mk-你的密钥")
    return key


def api_base(environ: Mapping[str, str]) -> str:
    return environ.get(METASO_BASE.name, "").strip() or DEFAULT_BASE


# 秘塔的错误码是几位数；更长的（或者不是数、不是文字的）是对方的数据，说明里只写开头
MAX_CODE = 10 ** 9
CODE_SHOWN = 40


def error_code(raw: object) -> int | str:
    """错误体里的错误码：合理的整数（3000、"2005"）变成 int，别的写成短短的一行文字（对象、列表写成 JSON）。"""
    if isinstance(raw, int | float | str) and not isinstance(raw, bool):
        try:
            number = int(raw)
        except (ValueError, OverflowError):  # "E01"、5000 位的数字、NaN
            number = MAX_CODE
        if abs(number) < MAX_CODE:
            return number
    return literal(json_text(raw), CODE_SHOWN)


def error_in_body(data: object) -> tuple[int | str, str] | None:
    """HTTP 200 里的错误体：{"errCode", "errMsg"} 或 {"code", "message"}。返回 (码, 消息) 或 None。"""
    if not isinstance(data, dict):
        return None
    for code_key, message_key in (("errCode", "errMsg"), ("code", "message")):
        raw = data.get(code_key)
        if raw in (None, 0, "0", 200, "200", ""):
            continue
        message = data.get(message_key) or data.get("msg") or ""
        return error_code(raw), json_text(message)
    return None


def parse_json(text: str) -> Any:
    try:
        return json_value(text)
    except (ValueError, RecursionError):
        return None


def post(path: str, body: dict[str, Any], accept: str = "application/json", *, key: str,
         base: str = DEFAULT_BASE, timeout: Timeout = DEFAULT_TIMEOUT, deadline: Deadline | None = None,
         on_retry: OnRetry | None = None) -> Any:
    """POST 到 {base}/{path}。accept 为 JSON 时返回解析后的对象，为 text/plain 时返回文本。

    暂时性的失败最多试 3 次（指数退避加抖动），永久性的（密钥无效、余额不足、次数用完、401/403）立刻结束。
    每次重试前调用 on_retry(说明)。任何失败都抛 MetasoError，错误信息里不含密钥。
    """
    base = base.rstrip("/")
    limit = deadline or Deadline()
    try:
        return with_retries(lambda: post_once(path, body, accept, key, base, timeout, limit), limit, on_retry)
    except DeadlineExceeded as error:
        raise out_of_time(MetasoError(f"请求秘塔 {path} 时{error}", next_step="可以用 --timeout 放宽总时限")) from None


def post_once(path: str, body: dict[str, Any], accept: str, key: str, base: str, timeout: Timeout,
              deadline: Deadline) -> Any:
    import requests  # 只在真的发请求时才导入：--verify 用不到网络，省下启动时间
    stop_if_gone()  # 提问的客户端（--serve）已经走了：不再为它付费
    url = f"{base}/{path.lstrip('/')}"
    shown = literal(base)  # 说明里的地址：一行，控制字符看得见
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": accept}
    try:
        response = requests.post(url, json=body, headers=headers, timeout=deadline.timeout(*timeout))
    except requests.Timeout:
        left = deadline.remaining()
        if left is not None and left < 0.5:  # 是总时限（--timeout）用完了：说时限，不说“请检查网络”
            raise DeadlineExceeded(f"超过了总时限 {deadline.seconds:g} 秒（--timeout）") from None
        raise MetasoError(f"秘塔服务 {shown} 超时没有响应", next_step="请检查网络后重试", transient=True) from None
    except requests.exceptions.InvalidHeader:
        raise MetasoError("请求头里有不允许的字符", next_step="请检查 METASO_API_KEY") from None
    except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema):
        # 地址本身不对：再试也不会成功，立刻报告
        raise MetasoError(f"秘塔地址 {shown} 不能用（地址的格式不对）", next_step="请检查 METASO_BASE") from None
    except requests.RequestException as error:
        raise MetasoError(f"连不上秘塔服务 {shown}（{network_reason(error)}）", next_step="请检查网络和 METASO_BASE",
                          transient=True) from None
    if response.encoding is None or "charset" not in response.headers.get("Content-Type", ""):
        response.encoding = "utf-8"  # 不声明字符集时 requests 会按 ISO-8859-1 解码中文
    try:
        text = response.text
    except requests.RequestException:
        raise MetasoError(f"秘塔服务 {shown} 的响应中途断开", transient=True) from None
    data = parse_json(text) if text.lstrip().startswith(("{", "[")) else None

    found = error_in_body(data)
    if found:
        code, message = found
        message = excerpt(mask(message, [key]), 200)
        raise MetasoError(f"秘塔返回错误 {code}：{message}", code=code, status=response.status_code,
                          next_step=NEXT_STEPS.get(code) if isinstance(code, int) else None,
                          transient=code in TRANSIENT_CODES)
    if response.status_code >= 400:
        raise http_error(response.status_code, excerpt(mask(text, [key])))
    if accept == "text/plain":
        return mask(text, [key])
    if data is None:
        kind = response.headers.get("Content-Type", "未知类型")
        raise MetasoError(f"秘塔返回了无法解析的内容（HTTP {response.status_code}，{kind}）："
                          f"{excerpt(mask(text, [key]))}", status=response.status_code,
                          next_step="请确认 METASO_BASE 指向秘塔开放平台的 API 地址")
    try:
        return mask_data(data, [key])
    except RecursionError:
        raise MetasoError("秘塔返回的 JSON 嵌套太深，无法使用", status=response.status_code) from None


def http_error(status: int, shown: str) -> MetasoError:
    if status in HTTP_NEXT_STEPS:
        next_step = HTTP_NEXT_STEPS[status]
    elif status >= 500:
        next_step = "秘塔服务暂时不可用，请稍后重试"
    else:
        next_step = "请检查 METASO_BASE 和请求参数"
    detail = f"：{shown}" if shown else ""
    return MetasoError(f"秘塔返回 HTTP {status}{detail}", status=status, next_step=next_step,
                       transient=status == 429 or status >= 500)


def search_body(query: str, size: int = SEARCH_DEFAULTS.size, scope: str = "webpage") -> dict[str, Any]:
    """搜索请求体（缓存也用它做键）。"""
    return {"q": query, "scope": scope, "size": str(size),
            "includeSummary": False, "includeRawContent": False, "conciseSnippet": False}


def search(query: str, size: int = SEARCH_DEFAULTS.size, scope: str = "webpage", *, key: str, base: str = DEFAULT_BASE,
           timeout: Timeout = DEFAULT_TIMEOUT, deadline: Deadline | None = None,
           on_retry: OnRetry | None = None) -> dict[str, Any]:
    """搜索，返回秘塔的原始响应（dict）。结果在 response["webpages"]（scope 为 webpage 时）。"""
    data = post("search", search_body(query, size, scope), key=key, base=base, timeout=timeout, deadline=deadline,
                on_retry=on_retry)
    if not isinstance(data, dict):
        raise MetasoError("秘塔的搜索响应不是 JSON 对象", next_step="请用 python metaso_search.py 看一次原始响应")
    return data


# 每条结果里程序要用的字段：title、link、snippet 一定要有，而且是文字（link 不能是空的）；
# date 可以没有（null 也算没有）。别的字段（score、position、authors）程序不用，不检查
RESULT_TEXT_FIELDS = ("title", "link", "snippet")
RESULT_OPTIONAL_FIELDS = ("date",)


def json_kind(value: object) -> str:
    """一个 JSON 值是什么（说明里用）。"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    kinds = {dict: "对象", list: "列表", str: "文字", int: "数字", float: "数字"}
    return next((name for kind, name in kinds.items() if isinstance(value, kind)), type(value).__name__)


def malformed(detail: str) -> MetasoError:
    """搜索响应的样子不对：不是“没有搜到”，要说清楚是哪个字段（退出码 3）。"""
    return MetasoError(f"秘塔的搜索响应格式不对：{detail}",
                       next_step="这不是没有搜到结果，而是响应的样子和已知的接口不一样；"
                                 "可以用 python metaso_search.py \"问题\" 看一次原始响应，稍后再试")


def search_results(response: dict[str, Any], scope: str = "webpage") -> list[dict[str, Any]]:
    """从搜索响应里取出结果列表。没有这个字段、或者是空列表：没有搜到（返回空列表）。
    样子不对（null、对象、不是对象的条目、缺了或类型不对的 title / link / snippet / date）：抛 MetasoError，
    说明里点名那个字段，比如 webpages[2].link——绝不当作“没有搜到结果”。"""
    name = scope + "s"
    if name not in response:
        return []
    items = response[name]
    if not isinstance(items, list):
        raise malformed(f"{name} 应是列表，收到的是{json_kind(items)}")
    for index, item in enumerate(items):
        where = f"{name}[{index}]"
        if not isinstance(item, dict):
            raise malformed(f"{where} 应是对象，收到的是{json_kind(item)}")
        for field in RESULT_TEXT_FIELDS:
            if item.get(field) is None:
                raise malformed(f"{where} 缺少 {field}")
            if not isinstance(item[field], str):
                raise malformed(f"{where}.{field} 应是文字，收到的是{json_kind(item[field])}")
        if not item["link"].strip():
            raise malformed(f"{where}.link 是空的")
        for field in RESULT_OPTIONAL_FIELDS:
            if item.get(field) is not None and not isinstance(item[field], str):
                raise malformed(f"{where}.{field} 应是文字，收到的是{json_kind(item[field])}")
    return items


def read_page(url: str, max_chars: int = SEARCH_DEFAULTS.max_chars, *, key: str, base: str = DEFAULT_BASE,
              timeout: Timeout = DEFAULT_TIMEOUT, deadline: Deadline | None = None,
              on_retry: OnRetry | None = None) -> str:
    """用秘塔的读取接口取网页正文（纯文本/Markdown），最多 max_chars 个字符。"""
    text = post("reader", {"url": url}, accept="text/plain", key=key, base=base, timeout=timeout,
                deadline=deadline, on_retry=on_retry)
    text = str(text).strip()
    if not text:
        raise MetasoError("读取到的正文是空的")
    if looks_like_html(text):
        raise MetasoError(f"读取接口返回了 HTML 页面而不是正文：{excerpt(text, 80)}")
    return text[:max_chars]


def looks_like_html(text: str) -> bool:
    """读取接口本该返回纯文本 / Markdown；返回整个 HTML 文档（比如“系统维护中”页面）时不能当正文用。"""
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html")) or "<head>" in head or "<body" in head


@dataclass(frozen=True)
class Client:
    """一个配置好的秘塔客户端：密钥、地址、总时限和重试时的提示。"""
    key: str
    base: str = DEFAULT_BASE
    deadline: Deadline | None = None
    on_retry: OnRetry | None = None
    timeout: Timeout = DEFAULT_TIMEOUT

    def search(self, query: str, size: int = SEARCH_DEFAULTS.size) -> dict[str, Any]:
        return search(query, size, key=self.key, base=self.base, timeout=self.timeout, deadline=self.deadline,
                      on_retry=self.on_retry)

    def read_page(self, url: str, max_chars: int = SEARCH_DEFAULTS.max_chars) -> str:
        return read_page(url, max_chars, key=self.key, base=self.base, timeout=self.timeout,
                         deadline=self.deadline, on_retry=self.on_retry)
