"""在真的聊天程序（Open WebUI）和真的浏览器（无头 Chromium）里看一眼 --serve 的回答。
手动运行：不在 CI 里，测试不导入它。

  .venv/bin/python bench/openwebui_check.py                         # 截图写到 bench/openwebui.png（不提交）
  .venv/bin/python bench/openwebui_check.py --question "家用 NAS 怎么选" --screenshot /tmp/owui.png

做五件事，结束时（Ctrl-C 也一样）停掉自己启动的一切、删掉临时目录：
  1. 把 Open WebUI（固定 OPEN_WEBUI_VERSION）装进它自己的虚拟环境（--venv，默认
     ~/.cache/answer-with-sources/openwebui-venv；装好过就直接用）。只装它随包发布的 requirements-slim.txt
     （官方 slim 镜像用的那份，不含 torch、sentence-transformers、chromadb），运行时设 USE_SLIM_DOCKER=true：
     不装 torch，也就不会被拉进几 GB 的 CUDA 版。再装 Python 的 playwright（只用它的驱动，不下载浏览器）；
  2. 启动 answer_with_sources.py --serve 127.0.0.1:0 --demo --local-model（内置的模拟秘塔、自带的小模型，
     系统挑空闲端口），等它在标准错误上报出地址；
  3. 启动 Open WebUI（只听 127.0.0.1，空闲端口）：不要登录（WEBUI_AUTH=False）、不连 Ollama、只有一个 OpenAI
     连接指向我们的 /v1、标题/标签/后续问题这三个后台任务照默认开着（它们发给聊天用的模型，也就是我们的服务：
     服务认得它们，不搜索：起标题用问题本身，别的等回答做完再问模型），别的后台任务关掉，数据目录在临时目录里；
     等 /health 回答；
  4. 用 Debian 的 Chromium（/usr/bin/chromium，全新的用户目录，只许访问本机）打开页面、选我们的模型、问一个问题、
     等回答结束，展开来源列表，截一张整页的图；
  5. 用中文说看到了什么：回答里有没有来源标签（Open WebUI 从流里的 delta.annotations 生成）、结论那一行
     （✓ 引用核对通过 / ⚠ 引用核对没通过）看不看得到、回答里的链接对不对，以及我们的服务记下的每个请求
     （只应有一个 POST /v1/chat/completions 搜索了：后台任务的那几个写着“聊天程序的后台任务：……”）。

要先有 Chromium 和中文字体：apt-get install -y chromium fonts-noto-cjk（bash quickstart.sh --test 也会装）。
页面用英文界面（locale en-US）：找按钮用的是它的英文 aria-label。
退出码：0 在页面上看到了回答；1 没看到（超时、页面出错）；2 准备不好（装不上、缺 Chromium、服务起不来）；130 被打断。
"""
import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent.parent
OPEN_WEBUI_VERSION = "0.12.4"  # 在 2 核、无 GPU 的 Debian 上实测过（2026-12-04）
PLAYWRIGHT_VERSION = "1.60.0"  # 和 Open WebUI 0.12.4 的 [all] 附加依赖同一版
DEFAULT_VENV = Path.home() / ".cache" / "answer-with-sources" / "openwebui-venv"
DEFAULT_SCREENSHOT = HERE / "bench" / "openwebui.png"
MARKER = "answer-with-sources-openwebui.json"  # 装好之后才写：中途被打断的环境下次会重装
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# 开发者环境里可能有的、会把 Open WebUI 引到别处的变量：一律不传给它
FOREIGN_SETTINGS = ("DATABASE_URL", "REDIS_URL", "WEBSOCKET_REDIS_URL", "VECTOR_DB", "OLLAMA_BASE_URL",
                    "OLLAMA_BASE_URLS", "OPENAI_API_BASE_URL", "OPENAI_API_BASE_URLS", "OPENAI_API_KEY",
                    "OPENAI_API_KEYS", "TASK_MODEL", "TASK_MODEL_EXTERNAL", "DEFAULT_MODELS")


class CheckError(Exception):
    """预料之中的失败：一句中文说明和退出码，不打印报错堆栈。"""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# ---- 1. 安装 ----

def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def base_python() -> str:
    """Open WebUI 要 Python 3.11 或 3.12：优先用运行本脚本的这个，不合适时在 PATH 上找。"""
    if sys.version_info[:2] in ((3, 11), (3, 12)):
        return sys.executable
    for name in ("python3.12", "python3.11"):
        found = shutil.which(name)
        if found:
            return found
    raise CheckError("Open WebUI 要 Python 3.11 或 3.12：这台机器上找不到（python3.11、python3.12 都不在 PATH 上）")


def pip_install(venv: Path, arguments: list[str], work: Path) -> None:
    output = work / "pip.log"
    with output.open("a", encoding="utf-8") as sink:
        done = subprocess.run([str(venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check",
                               *arguments], stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise CheckError(f"pip install {' '.join(arguments)} 没有成功（退出码 {done.returncode}）：\n{tail(output)}")


def folder_size(path: Path) -> int:
    total = 0
    for root, _folders, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def install_open_webui(venv: Path, work: Path) -> None:
    """装好过（记号文件里的版本对得上）就什么也不做；否则建虚拟环境，装 Open WebUI 本身（--no-deps）、
    它随包发布的 requirements-slim.txt 和 playwright。"""
    wanted = {"open-webui": OPEN_WEBUI_VERSION, "playwright": PLAYWRIGHT_VERSION}
    marker = venv / MARKER
    try:
        if json.loads(marker.read_text(encoding="utf-8")) == wanted and venv_python(venv).exists():
            log(f"用已经装好的 Open WebUI {OPEN_WEBUI_VERSION}：{venv}")
            return
    except (OSError, ValueError):
        pass
    log(f"安装 Open WebUI {OPEN_WEBUI_VERSION}（精简依赖，不装 torch）和 playwright {PLAYWRIGHT_VERSION} 到 {venv}"
        "（第一次要几分钟）…")
    started = time.monotonic()
    if not venv_python(venv).exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([base_python(), "-m", "venv", str(venv)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise CheckError(f"建不了虚拟环境 {venv}：{done.stderr.strip()}")
    # 整包依赖里有 sentence-transformers、transformers、accelerate：会拉进 torch（没有本地的 CPU 版时是几 GB 的
    # CUDA 版）。slim 那份只含用外部模型服务时要的东西
    pip_install(venv, ["--no-deps", f"open-webui=={OPEN_WEBUI_VERSION}"], work)
    site_packages = subprocess.run(
        [str(venv_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    slim = Path(site_packages) / "requirements-slim.txt"
    if not slim.exists():
        raise CheckError(f"Open WebUI {OPEN_WEBUI_VERSION} 的包里没有 requirements-slim.txt（{slim}）")
    pip_install(venv, ["-r", str(slim), f"playwright=={PLAYWRIGHT_VERSION}"], work)
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    log(f"装好了：{time.monotonic() - started:.0f} 秒，虚拟环境 {folder_size(venv) / 2**20:.0f} MB")


# ---- 2、3. 启动服务 ----

class Process:
    """自己启动的一个进程：在自己的进程组里（终端的 Ctrl-C 只到本脚本，由它按顺序停），停的时候整组一起停。"""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path, output: Path | None) -> None:
        self.output = output
        sink: IO[Any] | int = output.open("w", encoding="utf-8") if output else subprocess.PIPE
        try:
            self.popen = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink,
                                          stderr=subprocess.STDOUT if output else subprocess.PIPE,
                                          start_new_session=True, text=True, encoding="utf-8", errors="replace")
        finally:
            if not isinstance(sink, int):
                sink.close()

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.signal_group(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.signal_group(signal.SIGKILL)
                self.popen.wait()
        else:
            self.signal_group(signal.SIGKILL)  # 主进程已经退出时，组里可能还剩它的子进程

    def signal_group(self, number: int) -> None:
        try:
            os.killpg(self.popen.pid, number)
        except (ProcessLookupError, PermissionError):
            pass


class Browser(Process):
    """浏览器那一步（本脚本加 --browser-step，在 Open WebUI 的虚拟环境里）。playwright 把 Chromium 放在另一个
    进程组里：停完之后，命令行里带着这次的用户目录的进程（只可能是这次启动的 Chromium）也按进程号停掉。"""

    def __init__(self, command: list[str], profile: str) -> None:
        super().__init__(command, dict(os.environ), HERE, None)
        self.profile = profile

    def stop(self) -> None:
        super().stop()
        for entry in Path("/proc").iterdir():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if entry.name.isdigit() and f"--user-data-dir={self.profile}".encode() in command:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


class OurServer(Process):
    """answer_with_sources.py --serve：地址从标准错误里读出来，之后的每一行（访问日志）都收着。"""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        super().__init__([sys.executable, str(HERE / "answer_with_sources.py"), "--serve", "127.0.0.1:0", "--demo",
                          "--local-model"], env, cwd, None)
        self.lines: list[str] = []
        self.base_url = ""
        self.ready = threading.Event()
        threading.Thread(target=self.collect, daemon=True).start()

    def collect(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            line = line.rstrip("\n")
            self.lines.append(line)
            if not self.base_url and "OpenAI 兼容的服务在 http://" in line:
                self.base_url = "http://" + line.split("http://", 1)[1].split("（", 1)[0].strip()
                self.ready.set()
        self.ready.set()

    def wait_ready(self, seconds: float) -> None:
        if not self.ready.wait(seconds):
            raise CheckError(f"我们的服务 {seconds:.0f} 秒里没有报出地址：\n" + "\n".join(self.lines[-15:]))
        if not self.base_url:
            raise CheckError(f"我们的服务没有起来（退出码 {self.popen.poll()}）：\n" + "\n".join(self.lines[-15:]))

    def requests(self) -> list[str]:
        """地址那一行之后记下的请求（访问日志：方法、路径、状态码、毫秒）。"""
        return [line for line in self.lines if line.split(" ", 1)[0] in ("GET", "POST", "OPTIONS", "PUT", "DELETE")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get_json(url: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 本机地址，不走代理
    with opener.open(url, timeout=5) as response:
        return json.loads(response.read())


def model_ids(base_url: str) -> list[str]:
    try:
        return [item["id"] for item in get_json(base_url + "/models")["data"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CheckError(f"问不到我们的服务的模型列表（{base_url}/models）：{error}") from None


def open_webui_env(data: Path, api_url: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in FOREIGN_SETTINGS}
    env.update({
        "DATA_DIR": str(data),
        "WEBUI_AUTH": "False",
        "WEBUI_SECRET_KEY": secrets.token_hex(16),  # 不在当前目录里写 .webui_secret_key
        "ENABLE_OLLAMA_API": "False",
        "ENABLE_OPENAI_API": "True",
        "OPENAI_API_BASE_URLS": api_url,
        # 设置了 ANS_SERVER_KEY 时服务要它；没设置时服务不看，随便一个值
        "OPENAI_API_KEYS": os.environ.get("ANS_SERVER_KEY", "not-needed"),
        # 后台任务默认发给聊天用的模型（我们的服务）：起标题、打标签、猜后续问题照默认开着，看服务是不是只问模型、
        # 不搜索；别的关掉
        "ENABLE_TITLE_GENERATION": "True",
        "ENABLE_TAGS_GENERATION": "True",
        "ENABLE_FOLLOW_UP_GENERATION": "True",
        "ENABLE_AUTOCOMPLETE_GENERATION": "False",
        "ENABLE_SEARCH_QUERY_GENERATION": "False",
        "ENABLE_RETRIEVAL_QUERY_GENERATION": "False",
        "ENABLE_IMAGE_PROMPT_GENERATION": "False",
        "USE_SLIM_DOCKER": "true",  # 没装 torch 这些：不加载本地的嵌入、语音模型
        "OFFLINE_MODE": "true",  # 不查新版本、不下载模型
        "HF_HUB_OFFLINE": "1",
        "ENABLE_VERSION_UPDATE_CHECK": "False",
    })
    return env


def wait_for_open_webui(process: Process, url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            assert process.output is not None
            raise CheckError(f"Open WebUI 没有起来（退出码 {process.popen.returncode}）：\n{tail(process.output)}")
        try:
            if get_json(url + "/health").get("status"):
                return
        except (OSError, ValueError, AttributeError):
            pass
        time.sleep(1)
    assert process.output is not None
    raise CheckError(f"Open WebUI {seconds:.0f} 秒里没有回答 /health：\n{tail(process.output)}")


# ---- 4. 浏览器（在 Open WebUI 的虚拟环境里运行：playwright 装在那里） ----

def drive_browser(settings: dict[str, Any]) -> dict[str, Any]:
    """打开页面、选模型、提问、等回答结束、截图；返回看到的东西。出错时 result['error'] 是一句中文，也照样截图。"""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import Route, sync_playwright
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    result: dict[str, Any] = {"blocked": []}

    def only_this_machine(route: Route) -> None:
        host = route.request.url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
        if host in ("127.0.0.1", "localhost", "[::1]") or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:  # 比如来源按钮上的网站图标（www.google.com/s2/favicons）：这台机器不上外网
            result["blocked"].append(route.request.url[:120])
            route.abort()

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            settings["profile"], executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1280, "height": 900}, locale="en-US")
        try:
            context.route("**/*", only_this_machine)
            page = context.pages[0] if context.pages else context.new_page()
            step = "打开页面"
            try:
                page.goto(settings["url"], wait_until="load", timeout=60_000)
                page.locator("#chat-input").wait_for(timeout=60_000)
                try:  # 新数据目录第一次打开时弹出“What's New”
                    page.get_by_role("button", name="Okay, Let's Go!").click(timeout=5_000)
                except PlaywrightError:
                    pass
                step = f"在模型列表里选 {settings['model']}"
                page.locator("#model-selector-model-button").click(timeout=30_000)
                page.locator(f'[role=option][data-value="{settings["model"]}"]').click(timeout=30_000)
                step = "输入问题并发送"
                page.locator("#chat-input").click()
                page.keyboard.type(settings["question"])
                page.keyboard.press("Enter")
                started = time.monotonic()
                step = f"等回答结束（最多 {settings['timeout']:.0f} 秒）"
                # 一条回答：外层 div#message-<id>，里面是 .chat-assistant（文字、来源）和下面一排按钮
                answer = page.locator('div[id^="message-"]').filter(has=page.locator(".chat-assistant")).last
                # 回答结束（message.done）时才出现复制按钮
                answer.locator(".copy-response-button").wait_for(state="attached", timeout=settings["timeout"] * 1000)
                result["seconds"] = time.monotonic() - started
                page.wait_for_timeout(1_000)
                step = "读回答"
                result.update(read_answer(answer))
            except PlaywrightTimeoutError:
                result["error"] = f"{step}：超时了"
            except PlaywrightError as error:
                result["error"] = f"{step}时出错：{str(error).splitlines()[0]}"
            save_screenshot(page, settings["screenshot"])
        finally:
            context.close()
    return result


def read_answer(answer: Any) -> dict[str, Any]:
    """回答里的行内来源标签（[n] 变成的小按钮）、回答下面的来源按钮（点开列出每条来源）、文字和链接。"""
    seen: dict[str, Any] = {}
    inline = answer.locator('button[aria-label^="View source:"]:not([id^="source-"]), '
                            'button[aria-label$="more sources"]')
    seen["inline_chips"] = [chip.inner_text().replace("\n", " ").strip() for chip in inline.all()]
    toggle = answer.locator('button[aria-label^="Toggle "][aria-label*=" source"]')
    seen["sources_button"] = toggle.first.inner_text().strip() if toggle.count() else ""
    if toggle.count():
        toggle.first.click()
        answer.page.wait_for_timeout(500)
    seen["listed_sources"] = [item.inner_text().replace("\n", " ").strip()
                              for item in answer.locator('button[id^="source-"]').all()]
    seen["text"] = answer.locator("#response-content-container").inner_text()
    seen["links"] = [{"href": link.get_attribute("href") or "", "text": link.inner_text()}
                     for link in answer.locator("#response-content-container a[href]").all()]
    return seen


def save_screenshot(page: Any, path: str) -> None:
    """整页截图：聊天记录在一个自己滚动的框里，先把窗口拉到放得下全部内容的高度。"""
    height = page.evaluate("""() => {
        const box = document.getElementById('messages-container');
        const extra = box ? box.scrollHeight - box.clientHeight : 0;
        return document.documentElement.scrollHeight + Math.max(extra, 0);
    }""")
    page.set_viewport_size({"width": 1280, "height": min(max(int(height), 900), 16_000)})
    page.wait_for_timeout(500)
    page.screenshot(path=path, full_page=True)


def run_browser(venv: Path, settings: dict[str, Any], started: list[Process]) -> dict[str, Any]:
    """浏览器那一步在 Open WebUI 的虚拟环境里跑（本脚本加 --browser-step）；结果是它标准输出上的一行 JSON。"""
    command = [str(venv_python(venv)), str(Path(__file__).resolve()), "--browser-step", json.dumps(settings)]
    browser = Browser(command, settings["profile"])
    started.append(browser)
    assert browser.popen.stdout is not None and browser.popen.stderr is not None
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(browser.popen.stderr or []), daemon=True).start()
    output = browser.popen.stdout.read()
    browser.popen.wait()
    try:
        return dict(json.loads(output.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        raise CheckError("浏览器那一步没有给出结果（退出码 "
                         f"{browser.popen.returncode}）：\n{''.join(errors[-15:]).rstrip()}", 1) from None


# ---- 5. 报告 ----

def report(seen: dict[str, Any], requests: list[str], screenshot: Path) -> None:
    print(f"Open WebUI {OPEN_WEBUI_VERSION} 里看到的（截图：{screenshot}）：")
    if "seconds" in seen:
        print(f"  回答：出来了，从发送到结束 {seen['seconds']:.1f} 秒")
    if seen.get("error"):
        print(f"  ⚠ {seen['error']}")
    if "text" in seen:
        chips = seen["inline_chips"]
        listed = seen["listed_sources"]
        if seen["sources_button"]:
            print(f"  来源：回答下面有来源按钮“{seen['sources_button']}”，点开列出 {len(listed)} 条：")
            for item in listed:
                print(f"    {item}")
        else:
            print("  来源：回答下面没有来源按钮"
                  "（Open WebUI 只从流里 choices[0].delta.annotations 的 url_citation 生成来源）")
        if chips:
            print(f"  行内来源标签：{len(chips)} 个（[n] 变成了可点的标签）：{'、'.join(chips)}")
        else:
            print("  行内来源标签：没有（回答里的 [n] 还是原样的文字）")
        text = seen["text"]
        if "✓ 引用核对通过" in text:
            print("  结论：看得到“✓ 引用核对通过”")
        elif "⚠ 引用核对没通过" in text:
            print("  结论：看得到“⚠ 引用核对没通过”")
        else:
            print("  结论：页面上的回答里看不到结论那一行（✓ 引用核对通过 / ⚠ 引用核对没通过）")
        report_links(seen["links"])
    if seen.get("blocked"):
        print(f"  浏览器挡下了 {len(seen['blocked'])} 个去外网的请求（只许访问本机），比如 {seen['blocked'][0]}")
    print("我们的服务记下的请求：")
    for line in requests or ["（一个也没有）"]:
        print(f"  {line}")
    posts = [line for line in requests if line.startswith("POST /v1/chat/completions")]
    searched = [line for line in posts if "搜索：" in line]
    tasks = [line for line in posts if "后台任务" in line]
    if "seconds" not in seen:  # 回答没结束：那个请求可能还没记下
        return
    if len(searched) == 1:
        print(f"只有提问的那一个 POST 搜索了；Open WebUI 的后台任务（起标题、打标签、猜后续问题）发来 {len(tasks)} 个，"
              "都没有搜索（起标题用的是问题本身，别的等回答做完才问模型）。")
    else:
        print(f"⚠ 搜索了的 POST /v1/chat/completions 有 {len(searched)} 个（应该正好一个：提问那一次）")


def report_links(links: list[dict[str, str]]) -> None:
    """链接的地址里混进了中文（比如自动识别网址时把后面的“（未被引用）”也算了进去）就指出来。"""
    if not links:
        print("  链接：回答里没有可点的链接")
        return
    swallowed = [link for link in links if any(ord(char) > 127 for char in urllib.parse.unquote(link["href"]))]
    if swallowed:
        print(f"  链接：{len(links)} 个，其中 {len(swallowed)} 个把网址后面的文字也算进了链接：")
    else:
        print(f"  链接：{len(links)} 个，地址都是干净的网址")
    for link in swallowed[:5]:
        print(f"    {urllib.parse.unquote(link['href'])}")


# ---- 命令行 ----

def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="在 Open WebUI 和无头 Chromium 里看一眼 --serve 的回答（手动运行）")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                        help=f"Open WebUI 的虚拟环境（没有就建，装好过就直接用；默认 {DEFAULT_VENV}）")
    parser.add_argument("--screenshot", type=Path, default=DEFAULT_SCREENSHOT,
                        help="整页截图写到哪里（默认 bench/openwebui.png，不要提交）")
    parser.add_argument("--question", default="家用 NAS 怎么选", help="在聊天窗口里问的问题")
    parser.add_argument("--timeout", type=float, default=300.0, help="等回答结束最多多少秒（默认 300）")
    parser.add_argument("--browser-step", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def start_our_server(started: list[Process]) -> tuple[OurServer, str]:
    log("启动我们的服务：answer_with_sources.py --serve 127.0.0.1:0 --demo --local-model …")
    server = OurServer(dict(os.environ), HERE)
    started.append(server)
    server.wait_ready(180)
    model = model_ids(server.base_url)[0]
    log(f"我们的服务在 {server.base_url}，模型 {model}")
    return server, model


def start_open_webui(venv: Path, work: Path, api_url: str, started: list[Process]) -> str:
    url = f"http://127.0.0.1:{free_port()}"
    log(f"启动 Open WebUI {OPEN_WEBUI_VERSION}（{url}，数据在临时目录，每次都新建数据库）…")
    (work / "data").mkdir()
    command = [str(venv / "bin" / "open-webui"), "serve", "--host", "127.0.0.1", "--port", url.rsplit(":", 1)[1]]
    open_webui = Process(command, open_webui_env(work / "data", api_url), work, work / "open-webui.log")
    started.append(open_webui)
    waited = time.monotonic()
    wait_for_open_webui(open_webui, url, 300)
    log(f"Open WebUI 起来了（{time.monotonic() - waited:.0f} 秒）")
    return url


def program(args: argparse.Namespace, started: list[Process]) -> int:
    if not Path(CHROMIUM).exists():
        raise CheckError(f"没有 {CHROMIUM}：先装上 Debian 的 Chromium 和中文字体"
                         "（apt-get install -y chromium fonts-noto-cjk）")
    if shutil.which("fc-list") and not subprocess.run(["fc-list", ":lang=zh"], capture_output=True,
                                                      text=True).stdout.strip():
        log("⚠ 没有中文字体：截图里的中文会是方块（apt-get install -y fonts-noto-cjk）")
    venv = args.venv.expanduser().resolve()
    screenshot = args.screenshot.expanduser().resolve()
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="openwebui-check-"))
    try:
        install_open_webui(venv, work)
        server, model = start_our_server(started)
        url = start_open_webui(venv, work, server.base_url, started)
        log(f"无头 Chromium 打开 {url}，选 {model}，问“{args.question}”…")
        settings = {"url": url, "model": model, "question": args.question, "timeout": args.timeout,
                    "screenshot": str(screenshot), "profile": str(work / "chromium-profile")}
        seen = run_browser(venv, settings, started)
        time.sleep(1)  # 等访问日志的最后一行
        report(seen, server.requests(), screenshot)
        return 0 if "seconds" in seen else 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # 停的时候再按 Ctrl-C 也要停完
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for process in reversed(started):
            process.stop()
        shutil.rmtree(work, ignore_errors=True)


def interrupted(_number: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.browser_step:
        # 被停时马上退出：playwright 的驱动看到标准输入关了，会自己关掉 Chromium
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, lambda _number, _frame: os._exit(130))
        print(json.dumps(drive_browser(json.loads(args.browser_step)), ensure_ascii=False), flush=True)
        return 0
    signal.signal(signal.SIGTERM, interrupted)
    started: list[Process] = []
    try:
        return program(args, started)
    except CheckError as error:
        log(f"⚠ {error}")
        return error.exit_code
    except OSError as error:  # 比如 --venv、--screenshot 的目录建不了、写不了
        log(f"⚠ 读写文件出错：{error.filename or ''}（{error.strerror or error}）")
        return 2
    except KeyboardInterrupt:
        log("已中断" + ("：启动的进程都停掉了" if started else ""))
        return 130


if __name__ == "__main__":
    sys.exit(main())
