"""审阅页（--html）：转义、只做 http(s) 链接、CSP、JSON Lines 一页多段、不跟随符号链接、写不出来时的错误；
以及在真实的无头 Chromium 里打开：能从 file:// 加载、截图不是空白、标出的句子和资料各有一个元素、
带恶意标记的网页改不了 document.title。没有 Chromium 时跳过浏览器测试（CI 里一定装了，没装就算失败）。"""
import json
import os
import shutil
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fake_metaso import NAS_PAGES
from sourced_answers.text import REDACTED
from tests.support import GOOD_ANSWER, INVENTED, cli_env, run_cli

NAS = [{"title": p["title"], "link": f"https://nas.example/{i}", "text": p["text"]} for i, p in enumerate(NAS_PAGES)]
HOSTILE_TITLE = '<script>document.title="pwned"</script>资料'
HOSTILE_TEXT = '正文<img src=x onerror="document.title=\'pwned\'"><svg onload="document.title=\'pwned\'">结束'
HOSTILE = {
    "question": "<b>问题</b><script>document.title='pwned'</script>",
    "model": "<img src=x onerror=alert(1)>",
    "answer": GOOD_ANSWER + "\n\n<script>document.title='pwned'</script>群晖的 NAS 系统比威联通稳定得多 [4]。",
    "sources": NAS[:3] + [{"title": HOSTILE_TITLE, "link": "javascript:document.title='pwned'", "text": HOSTILE_TEXT}],
}


def write_input(tmp_path, *records):
    path = tmp_path / "saved.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return str(path)


def review(tmp_path, *records, extra=()):
    page = tmp_path / "review.html"
    result = run_cli("--verify", write_input(tmp_path, *records), "--html", str(page), *extra, env=cli_env())
    return result, page


class Elements(HTMLParser):
    """数元素：按 class、按标签，并取出 <title>。"""

    def __init__(self):
        super().__init__()
        self.classes = []
        self.tags = []
        self.title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.classes.append((tag, dict(attrs).get("class") or ""))
        self.in_title = tag == "title"

    def handle_endtag(self, tag):
        self.in_title = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data

    def count(self, css):
        return sum(1 for _, classes in self.classes if set(css.split()) <= set(classes.split()))


def parse(text):
    elements = Elements()
    elements.feed(text)
    return elements


# ---------- 页面本身 ----------

def test_everything_from_pages_and_the_model_is_escaped(tmp_path):
    result, page = review(tmp_path, HOSTILE)
    assert result.returncode == 1, result.stderr
    text = page.read_text(encoding="utf-8")
    elements = parse(text)
    assert "script" not in elements.tags and "img" not in elements.tags and "svg" not in elements.tags
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;资料" in text
    assert "onerror=&quot;document.title" in text


def test_only_http_links_become_links(tmp_path):
    _, page = review(tmp_path, HOSTILE)
    text = page.read_text(encoding="utf-8")
    assert 'href="https://nas.example/0"' in text
    assert 'href="javascript:' not in text and "javascript:document.title=&#x27;pwned&#x27;" in text


def test_page_forbids_scripts_and_outside_resources(tmp_path):
    _, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text and "script-src 'none'" in text
    assert "<link" not in text and "src=" not in text and "@import" not in text and "url(" not in text


def test_verdict_is_in_words_not_colour_alone(tmp_path):
    _, good = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    assert "✓ 引用核对通过" in good.read_text(encoding="utf-8")
    _, bad = review(tmp_path, {"answer": INVENTED, "sources": NAS})
    assert "⚠ 引用核对没通过：1 个问题" in bad.read_text(encoding="utf-8")


def test_flagged_sentence_shows_reason_overlap_and_links_to_highlighted_evidence(tmp_path):
    answer = "RAID5 至少两块盘就能容忍一块盘损坏 [2]。"
    _, page = review(tmp_path, {"answer": answer, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    elements = parse(text)
    assert elements.count("claim flagged") == 1 and elements.count("source") == 5
    assert "里说同一件事的地方对不上" in text and "（重合度 " in text
    assert '<a href="#ev-1">RAID5 至少三块盘' in text and '<mark id="ev-1">RAID5 至少三块盘' in text


def test_every_link_to_a_reason_or_evidence_has_one_target(tmp_path):
    """被标出的句子链接到它的“为什么”，证据链接到资料里的高亮：每个 #id 都有且只有一个元素。"""
    import re
    answer = "RAID5 至少两块盘就能容忍一块盘损坏 [2]。\n\n群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。"
    _, page = review(tmp_path, {"answer": answer, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    links = set(re.findall(r'href="#([^"]+)"', text))
    assert {"why-0", "ev-1"} <= links and links <= set(ids)


def test_identical_uncited_items_each_get_their_own_reason_once(tmp_path):
    """三个一样的、没有引用的列表项是三个问题：每项标一次、各有一段原因（不是每项都挂上全部三个）。
    整段没有引用的段落：里面的每一句都标出来。"""
    answer = ("家用 NAS 至少选两盘位 [1]。\n\n- NAS 两盘位\n- NAS 两盘位\n- NAS 两盘位\n\n"
              "第一句没有引用。第二句也没有。")
    result, page = review(tmp_path, {"answer": answer, "sources": NAS})
    problems = [p for p in json.loads(run_cli("--verify", write_input(tmp_path, {"answer": answer, "sources": NAS}),
                                              "--json", env=cli_env()).stdout)["problems"]]
    assert [p["kind"] for p in problems].count("uncited_paragraph") == 4
    text = page.read_text(encoding="utf-8")
    elements = parse(text)
    assert elements.count("claim flagged") == 5
    assert text.count("第 2 段第 1 项没有引用") == 1 and text.count("第 2 段第 3 项没有引用") == 1
    assert text.count("第 3 段没有引用") == 2  # 那一段的两句各自链到同一个原因


def test_a_better_source_is_linked(tmp_path):
    _, page = review(tmp_path, {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS})
    text = page.read_text(encoding="utf-8")
    assert "重合度只有 0%" in text and '可能更合适的资料：<a href="#src-1">[1]</a>' in text


def test_json_lines_give_one_page_with_a_section_per_answer(tmp_path):
    result, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS}, {"answer": INVENTED, "sources": NAS})
    elements = parse(page.read_text(encoding="utf-8"))
    assert result.returncode == 1
    assert sum(1 for tag, css in elements.classes if tag == "section" and "answer-block" in css) == 2
    assert elements.count("source") == 10 and elements.count("claim flagged") == 1


def test_repairs_are_listed_with_fix(tmp_path):
    result, page = review(tmp_path, {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS},
                          extra=("--fix",))
    text = page.read_text(encoding="utf-8")
    assert result.returncode == 0 and "<h2>已修正</h2>" in text and "改引" in text


def test_a_symlink_at_the_path_is_neither_followed_nor_replaced(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("别动我", encoding="utf-8")
    link = tmp_path / "review.html"
    link.symlink_to(precious)
    result = run_cli("--verify", write_input(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS}), "--html", str(link),
                     env=cli_env())
    assert result.returncode == 2 and "符号链接" in result.stderr and result.stdout == ""
    assert precious.read_text(encoding="utf-8") == "别动我"
    assert link.is_symlink()


def test_failure_to_write_is_exit_2_and_the_answer_is_still_printed(tmp_path):
    path = write_input(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    # 目录在、却写不进去（连 root 也不行）：只有真正写的时候才失败
    result = run_cli("--verify", path, "--html", "/proc/self/review.html", env=cli_env())
    assert result.returncode == 2
    assert result.stdout.startswith(GOOD_ANSWER) and "✓ 引用核对通过" in result.stdout
    assert "✗ 写不了审阅页" in result.stderr and "Traceback" not in result.stderr


def test_question_run_writes_the_page(model_server, tmp_path):
    page = tmp_path / "run.html"
    env = cli_env(None, model_server, ANS_MODEL="wrong-source")
    result = run_cli("--demo", "家用 NAS 怎么选", "--html", str(page), env=env)
    text = page.read_text(encoding="utf-8")
    assert result.returncode == 1 and "模型：wrong-source" in text and "家用 NAS 怎么选" in text
    assert parse(text).count("claim flagged") == 1


def test_html_with_eval_is_a_usage_error(tmp_path):
    result = run_cli("--eval", "questions.txt", "--html", str(tmp_path / "x.html"), env=cli_env())
    assert result.returncode == 2 and "--html" in result.stderr



def test_stderr_says_where_the_page_was_written_after_verify(tmp_path):
    result, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    assert result.returncode == 0 and page.exists()
    assert result.stderr.splitlines().count(f"审阅页已写到 {page}") == 1


def test_stderr_says_where_the_page_was_written_after_a_question_without_showing_the_key(model_server, tmp_path):
    key = "sk-MODEL-CANARY-0123456789"
    model_server.required_key = key
    page = tmp_path / f"{key}.html"
    env = cli_env(None, model_server, ANS_MODEL="good", ANS_API_KEY=key)
    result = run_cli("--demo", "家用 NAS 怎么选", "--html", str(page), env=env)
    assert result.returncode == 0, result.stderr
    assert page.exists() and key not in result.stderr + result.stdout
    assert result.stderr.splitlines().count(f"审阅页已写到 {tmp_path}/{REDACTED}.html") == 1


# ---------- 真实的浏览器 ----------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser(tmp_path):
    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("CI 里没有装 Chromium（quickstart.sh --test 会装 Debian 的 chromium 包）")
        pytest.skip("没有 Chromium")

    def run(page, *args):
        command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={tmp_path / 'profile'}", *args, page.resolve().as_uri()]
        return subprocess.run(command, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    return run


def png_is_blank(path):
    """解出 PNG 的像素数据：全是同一种颜色就算空白（不用第三方库）。"""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position = 8
    chunks = []
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        if kind == b"IDAT":
            chunks.append(data[position + 8:position + 8 + length])
        position += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return len(set(pixels)) <= 3


@pytest.mark.slow
def test_page_loads_from_file_and_is_not_blank(tmp_path, browser):
    _, page = review(tmp_path, {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS})
    shot = tmp_path / "shot.png"
    result = browser(page, f"--screenshot={shot}", "--window-size=1000,1400")
    assert shot.exists(), result.stderr[-800:]
    assert not png_is_blank(shot)


@pytest.mark.slow
def test_dom_has_one_marked_element_per_flagged_sentence_and_per_source(tmp_path, browser):
    record = {"answer": GOOD_ANSWER + "\n\n" + INVENTED + "\n\n需要转码 4K 视频时选带核显的 Intel 型号 [2]。",
              "sources": NAS}
    _, page = review(tmp_path, record)
    dom = browser(page, "--dump-dom")
    elements = parse(dom.stdout)
    assert elements.count("claim flagged") == 2
    assert elements.count("claim ok") == 5
    assert elements.count("source") == len(NAS)


@pytest.mark.slow
def test_hostile_markup_cannot_change_the_title(tmp_path, browser):
    _, page = review(tmp_path, HOSTILE)
    dom = browser(page, "--dump-dom")
    title = parse(dom.stdout).title
    assert title and "pwned" != title and title.startswith("<b>问题</b>")
