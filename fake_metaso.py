"""本地的模拟秘塔服务：行为按 shared/metaso-api.md 里已知的真实接口来做。

用途：跑测试（故障开关：fail、fail_with、--fault），以及不开程序单独试秘塔的接口。它就是 --demo 用的
sourced_answers.search.demo_service.DemoMetaso，再加上故障；页面在 sourced_answers.search.demo_pages。
  python fake_metaso.py --port 18400            # 在 127.0.0.1:18400 上启动
  METASO_BASE=http://127.0.0.1:18400/api/v1 METASO_API_KEY=mk-fake-demo-key \\
      python answer_with_sources.py "家用 NAS 怎么选"

接口：
  POST /api/v1/search   搜索（size 可以是字符串或整数）
  POST /api/v1/reader   读取正文（Accept: text/plain 给正文，否则给 JSON）
  GET  /page/N          第 N 个页面的 HTML（搜索结果里的 link 指向这里）
密钥不对时和真实接口一样返回 HTTP 200 加错误体：search 是 errCode 2005，reader 是 errCode 500。
"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from sourced_answers.cli.arguments import ChineseArgumentParser, ChineseHelpFormatter, add_standard_flags, in_range
from sourced_answers.cli.launch import print_error, run
from sourced_answers.core.errors import ENDINGS, ExitCode, UsageError, exit_code_of
from sourced_answers.core.network import os_error_text
from sourced_answers.core.secrets import METASO_MIN_LENGTH, check_secret
from sourced_answers.core.strings import literal
from sourced_answers.search.demo_pages import (
    ENGLISH_PAGES,
    INJECTION_PAGES,
    LONG_PAGES,
    NAS_PAGES,
    PAGE_SETS,
    Page,
)
from sourced_answers.search.demo_service import DEFAULT_KEY, JSON_TYPE, DemoMetaso, snippet_of

__all__ = ["DEFAULT_KEY", "ENGLISH_PAGES", "FAULTS", "INJECTION_PAGES", "LONG_PAGES", "NAS_PAGES", "PAGE_SETS",
           "FakeMetaso", "Page", "main", "snippet_of"]

# 预设的故障：命令行 --fault 接口=名字[:次数]，测试里 fake.fail_with(接口, 名字, 次数)
FAULTS: dict[str, dict[str, Any]] = {
    "429": {"status": 429, "body": "Too Many Requests", "content_type": "text/plain"},
    "500": {"status": 500, "body": "<html><body><h1>500 Internal Server Error</h1></body></html>",
            "content_type": "text/html"},
    "502": {"status": 502, "body": "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>",
            "content_type": "text/html"},
    "503": {"status": 503, "body": "Service Unavailable", "content_type": "text/plain"},
    "401": {"status": 401, "body": '{"error":"unauthorized"}', "content_type": JSON_TYPE},
    "403": {"status": 403, "body": "Forbidden", "content_type": "text/plain"},
    "errcode-500": {"body": '{"errCode":500,"errMsg":"服务器错误"}', "content_type": JSON_TYPE},
    "errcode-5000": {"body": '{"code":5000,"message":"系统内部错误"}', "content_type": JSON_TYPE},
    "errcode-2005": {"body": '{"errCode":2005,"errMsg":"API密钥无效"}', "content_type": JSON_TYPE},
    "errcode-3000": {"body": '{"errCode":3000,"errMsg":"余额不足"}', "content_type": JSON_TYPE},
    "errcode-3003": {"body": '{"code":3003,"message":"今日调用次数已达上限"}', "content_type": JSON_TYPE},
    "html": {"body": "<html><body>系统维护中，请稍后访问</body></html>", "content_type": "text/html"},
    # HTTP 200、JSON 也合法，只是结果列表的样子不对：程序要说“格式不对”并点名字段，而不是“没有搜到结果”
    "webpages-null": {"body": '{"credits":3,"total":5,"webpages":null}', "content_type": JSON_TYPE},
    "webpages-object": {"body": '{"credits":3,"total":5,"webpages":{"title":"家用 NAS 选购要点"}}',
                        "content_type": JSON_TYPE},
    "echo": {"status": 500, "body": "<pre>收到的请求头：Authorization: {authorization}</pre>",
             "content_type": "text/html"},
    "drop": {"kind": "drop"},
    "hang": {"kind": "hang"},
}


def load_fixtures(path: str) -> list[Page]:
    """--fixtures 文件：JSON 数组，每项至少有 title 和 text，可选 date、authors、snippet，
    以及 reader_fault（读取这个页面时原样返回的错误体）。"""
    with open(path, encoding="utf-8") as handle:
        pages = json.load(handle)
    if not isinstance(pages, list) or not all(isinstance(p, dict) and "title" in p and "text" in p
                                              for p in pages):
        raise ValueError("应是 JSON 数组，每项至少有 title 和 text")
    return pages


class FakeMetaso(DemoMetaso):
    """演示服务加上故障开关：测试用它模拟真实服务的各种故障。with FakeMetaso() as fake: fake.base_url"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.fault_lock = threading.Lock()
        self.busy = 0  # 正在回答的请求数：不为 0 时 reusable() 是假（上一个测试留下了挂着的请求）
        self.closed = False
        super().__init__(*args, **kwargs)
        self.idle = threading.Condition(self.lock)  # 处理完一个请求时通知（wait_until_reusable 等它）

    def reset(self) -> None:
        """演示服务的 reset()，再去掉所有故障。"""
        super().reset()
        # 接口名（search / reader）→ 故障设置（见 fail）
        self.faults: dict[str, dict[str, Any]] = {}
        # 非 None 时（有 wait() 的闸门，比如 tests/scripted_model.Hold）：每个 POST（搜索、读取）先停在这里（还没记进
        # requests），测试放行了才照常回答——“正在搜索”的时候做点什么，不用睡几秒
        self.hold: Any = None

    def reusable(self) -> bool:
        """能不能交给下一个测试（tests/conftest.py）：没被关掉，也没有还在处理的请求（hang、delay 的故障）。"""
        with self.lock:
            return not self.closed and self.busy == 0

    def wait_until_reusable(self, seconds: float) -> bool:
        """最多等 seconds 秒，等还在处理的请求处理完；返回 reusable()。"""
        with self.idle:
            self.idle.wait_for(lambda: self.closed or self.busy == 0, seconds)
            return not self.closed and self.busy == 0

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
        super().close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        """演示服务的处理函数，外加数着正在处理的请求（reusable 用）。"""
        base: Any = super()._handler_class()
        fake = self

        class CountedHandler(base):
            def do_GET(self) -> None:
                with fake.answering():
                    super().do_GET()

            def do_POST(self) -> None:
                with fake.answering():
                    if fake.hold is not None:
                        fake.hold.wait()
                    super().do_POST()

        return CountedHandler

    @contextmanager
    def answering(self) -> Iterator[None]:
        with self.lock:
            self.busy += 1
        try:
            yield
        finally:
            with self.lock:
                self.busy -= 1
                self.idle.notify_all()

    def fail(self, endpoint: str, body: str = "", status: int = 200, content_type: str = JSON_TYPE,
             times: int | None = None, kind: str = "respond") -> None:
        """让某个接口出错，模拟真实服务的各种故障。

        kind：respond（返回给定的状态和响应体）、drop（不回应直接断开连接）、hang（一直不回应）。
        times：前几次请求出错，之后恢复正常；None 表示一直出错。
        响应体里的 {authorization} 会换成请求里的 Authorization 头，模拟把请求回显出来的服务器。
        """
        self.faults[endpoint] = {"kind": kind, "status": status, "content_type": content_type, "body": body,
                                 "times": times}

    def fail_with(self, endpoint: str, preset: str, times: int | None = None) -> None:
        """用 FAULTS 里预设的故障（命令行 --fault 用的也是它们）。"""
        self.fail(endpoint, times=times, **FAULTS[preset])

    def take_fault(self, endpoint: str) -> dict[str, Any] | None:
        """这次请求要不要出错：返回故障设置或 None。"""
        with self.fault_lock:
            fault = self.faults.get(endpoint)
            if fault is None:
                return None
            if fault["times"] is not None:
                if fault["times"] <= 0:
                    return None
                fault["times"] -= 1
            return fault



def parsed_fault(spec: str) -> tuple[str, str, int | None]:
    """--fault 接口=故障[:次数] → (接口, 故障, 次数)；看不懂时是用法错误（在监听之前）。"""
    endpoint, _, rest = spec.partition("=")
    preset, _, times = rest.partition(":")
    if endpoint not in ("search", "reader") or preset not in FAULTS or (times and not times.isdigit()):
        raise UsageError(f"--fault {literal(spec)} 看不懂：应写成 search=503 或 reader=drop:2，"
                         f"故障有 {'、'.join(FAULTS)}")
    return endpoint, preset, int(times) if times else None


def build_parser() -> ChineseArgumentParser:
    parser = ChineseArgumentParser(prog="python fake_metaso.py", formatter_class=ChineseHelpFormatter,
                                   add_help=False, description="本地模拟秘塔服务（搜索 + 读取网页）。")
    parser.add_argument("--host", default="127.0.0.1", help="监听地址（默认 127.0.0.1）")
    parser.add_argument("--port", type=in_range(0, 65535), default=18400,
                        help="端口，0–65535（默认 18400，0 表示随机空闲端口）")
    parser.add_argument("--key", default=DEFAULT_KEY, help=f"接受的 API Key（默认 {DEFAULT_KEY}）")
    parser.add_argument("--pages", choices=sorted(PAGE_SETS), default="nas",
                        help="内置的页面：nas（中文，默认）、nas-en（英文）、nas-long（正文前有很长的导航）、"
                             "nas-injection（第 3 页想给模型下指令）")
    parser.add_argument("--fixtures",
                        help="自己的页面：JSON 数组，每项有 title、text，可选 date、authors（优先于 --pages）")
    parser.add_argument("--delay", type=in_range(0.0, 600.0, float), default=0.0,
                        help="每个 API 请求额外等待的秒数，0–600")
    parser.add_argument("--fault", action="append", default=[], metavar="接口=故障[:次数]",
                        help=f"让 search 或 reader 出错，可以写多次。故障：{'、'.join(FAULTS)}；"
                             f"“:次数”表示前几次出错、之后恢复（测试重试），例如 --fault search=503:2")
    add_standard_flags(parser, debug=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        # 它打印出来让人 export 的密钥：和真的密钥一样检查（可打印的 ASCII、没有空白和控制字符），
        # 一个带换行或转义序列的 --key 伪造不出一行“✓ 引用核对通过”
        check_secret(args.key, "--key", METASO_MIN_LENGTH, "请换一个，比如默认的 " + DEFAULT_KEY)
        faults = [parsed_fault(spec) for spec in args.fault]
    except ENDINGS as ending:
        return exit_code_of(ending, print_error)
    try:
        pages = load_fixtures(args.fixtures) if args.fixtures else PAGE_SETS[args.pages]
    except OSError as error:
        print(f"✗ 读不了页面文件 --fixtures {literal(args.fixtures)}：{os_error_text(error)}", file=sys.stderr)
        return ExitCode.USAGE
    except (ValueError, RecursionError) as error:
        print(f"✗ 页面文件 --fixtures {literal(args.fixtures)} 的格式不对：{literal(error)}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        fake = FakeMetaso(pages, key=args.key, delay=args.delay, host=args.host, port=args.port)
    except (OSError, OverflowError) as error:
        reason = os_error_text(error) if isinstance(error, OSError) else "端口无效"
        print(f"✗ 无法监听 {literal(args.host)}:{args.port}：{reason}", file=sys.stderr)
        return ExitCode.USAGE
    for endpoint, preset, times in faults:
        fake.fail_with(endpoint, preset, times)
    print(f"模拟秘塔服务已启动：METASO_BASE={fake.base_url}  METASO_API_KEY={fake.key}", file=sys.stderr)
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt as ending:
        return exit_code_of(ending, print_error)
    finally:
        fake.server.server_close()
    return ExitCode.PASSED


if __name__ == "__main__":
    run(main)
