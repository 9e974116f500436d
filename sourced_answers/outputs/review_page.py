"""核对结果的审阅页（--html FILE）：一个自带样式、不含任何脚本的 HTML 文件，离线、从 file:// 打开都能看。

页面上的文字来自网页、搜索结果和模型，一律转义；只有 http、https 和 file:///（--docs 的本机文档）的地址才做成链接；
页面带一条严格的 Content-Security-Policy（不许任何脚本、外部资源），即使哪里漏了转义也不会执行。
每个问题的原因只写一次，紧跟在它那一句下面（整段的问题在那一段的最后一句下面）；同样的问题（same_problems）
只在最早的那一处写原因、说出所有的地方，别处写一行“同第 N 段”链过去；
交互只用锚点和 :target：点原因里的证据，跳到资料里高亮的那一句。
"""
from collections.abc import Callable, Sequence
from datetime import datetime

from sourced_answers.checker import (
    Claim,
    Span,
    analyse,
    citation_marks,
    claims_with_positions,
    strip_terminal,
)
from sourced_answers.core.masking import mask_data
from sourced_answers.core.output_files import PlannedFile, write_file
from sourced_answers.core.strings import literal
from sourced_answers.outputs.records import Record
from sourced_answers.outputs.review_alignment import Shown, checked_by_claim, claim_html, comparison
from sourced_answers.outputs.review_reasons import (
    Evidence,
    Reasons,
    escape,
    flags_by_claim,
    kind_in,
    scores_by_claim,
    with_block,
)

Log = Callable[[str], None]

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; "
       "base-uri 'none'; form-action 'none'")
# overflow-wrap:anywhere：没有空格的长串（几千个字的标题、链接、没有标点的回答、资料正文）在任何地方都能折行，
# 页面不会比窗口宽，也不会把字挤出去（tests/test_review_page.py 在 800 和 375 像素宽的浏览器里量）。
# 标签和支持分（.tag、.score）正相反：一个不拆开的小块（inline-block、nowrap），放不下就整个换到下一行，
# 手机宽的屏幕上不会折成“只有 / 搜索摘要”（测试在 320 到 414 像素宽的 Chromium 里量）。页头的生成时间（.when）也一样：
# 放不下就整个换行，不折成“2026-12-07 / 00:51”
STYLE = """
body{font:16px/1.7 system-ui,"PingFang SC","Noto Sans CJK SC",sans-serif;max-width:60em;margin:2em auto;
padding:0 1em;color:#222;overflow-wrap:anywhere;word-break:normal}
h1{font-size:1.4em}.meta{color:#555}.verdict{font-weight:bold;padding:.4em .8em;border-radius:4px;display:inline-block}
.verdict.passed{background:#e6f4ea;color:#1e6b35}.verdict.failed{background:#fdecea;color:#8a1c12}
.claim.ok{border-bottom:2px solid #9fd3ae}.claim.flagged{background:#fdecea;border-bottom:2px solid #d93025}
.claim.flagged::before{content:"⚠ ";color:#d93025}
.claim.cross{background:#fff4ce;border-bottom:2px dashed #b58900}.claim.cross::before{content:"？ ";color:#8a6d00}
.claim a{color:inherit;text-decoration:none}
.why{margin:.2em 0 .7em 1em;padding:.1em 0 .1em .7em;border-left:3px solid #d93025;font-size:.92em;color:#444}
.reason{margin:.2em 0}.reason:target{outline:2px solid #d93025}.reason .kind{color:#8a1c12}
.reason.cross .kind{color:#8a6d00}.why.cross{border-left-color:#b58900}
.reason.same a{color:#555;text-decoration:none}.reason.same a:hover{text-decoration:underline}
.source{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1em 0}.source:target{border-color:#1a73e8}
.source .text{white-space:pre-wrap;max-height:18em;overflow:auto;background:#fafafa;padding:.5em;font-size:.92em}
.unused{color:#777}.tag{font-size:.8em;border:1px solid #bbb;border-radius:3px;padding:0 .3em;margin-left:.4em}
.score{font-size:.72em;border:1px solid #bbb;border-radius:3px;padding:0 .25em;margin:0 .2em;color:#1e6b35}
.tag,.score{display:inline-block;white-space:nowrap;line-height:1.3}.when{white-space:nowrap}
.score.low{color:#8a1c12;border-color:#e0a39c}
mark{background:#fff3b0}mark:target{background:#ffd24d;outline:2px solid #d93025}
mark.gap{background:#ffd6d1;color:inherit;text-decoration:underline wavy #d93025;text-decoration-skip-ink:none}
mark.same{background:#d8f0de;color:inherit}
.compare{display:grid;grid-template-columns:1fr 1fr;gap:.2em 1.2em;margin:.4em 0 .2em;font-size:.95em}
.compare>div{min-width:0}@media (max-width:40em){.compare{grid-template-columns:1fr}}
.repairs li{margin:.3em 0}.answer .para{margin:.6em 0}section.answer-block{border-top:3px solid #eee;margin-top:2em}
"""


def safe_link(url: str | None, label: str | None = None) -> str:
    """只有 http、https 和 file（--docs 的本机文档）的地址做成链接；其余（javascript: 之类）只显示为文字。"""
    url = (url or "").strip()
    shown = escape(label if label is not None else url)
    if url.lower().startswith(("http://", "https://", "file:///")):
        return f'<a href="{escape(url)}" rel="noopener noreferrer">{shown}</a>'
    return shown


def link_citations(text: str, prefix: str, count: int) -> str:
    """转义一段文字，并把其中的引用标记做成指向资料的链接（不存在的编号不做链接）。"""
    pieces = []
    position = 0
    for start, end, numbers in citation_marks(text):
        pieces.append(escape(text[position:start]))
        links = []
        for number in numbers:
            if 1 <= number <= count:
                links.append(f'<a class="cite" href="#{prefix}src-{number}">[{number}]</a>')
            else:
                links.append(f'<span class="cite missing">[{number}]</span>')
        pieces.append("".join(links))
        position = end
    pieces.append(escape(text[position:]))
    return "".join(pieces)


def score_badge(score: float | None) -> str:
    if score is None:
        return ""
    level = "low" if score < 0.5 else "high"
    return f'<span class="score {level}" title="支持分：所引资料支持这句话的可能，0 到 1">{score:.2f}</span>'


def visible_claims(answer: str) -> list[tuple[int, Claim, Span]]:
    """回答里能在原文中找到、互不重叠的句子（按出现的顺序）：页面上标出的就是这些。
    每一句带着它在 analyse(answer).claims 里的位置（问题、支持分都按这个位置对到句子上）。"""
    claims: list[tuple[int, Claim, Span]] = []
    end = 0
    for position, (claim, span) in enumerate(claims_with_positions(answer)):
        if span and span[0] >= end:
            claims.append((position, claim, span))
            end = span[1]
    return claims


def render_answer(record: Record, prefix: str, evidence: Evidence) -> str:
    """回答的正文：句子按核对结论标出，每个问题的原因紧跟在它那一句下面；对不上任何一句的问题列在后面。"""
    answer = strip_terminal(record.get("answer") or "")  # 句子的位置是在去掉终端控制序列之后的回答里
    count = len(record.get("sources") or [])
    claims = visible_claims(answer)
    structure = analyse(answer)
    reasons = Reasons(record, prefix, evidence)
    shown = {index for index, _, _ in claims}
    # 只标页面上找得到的句子：原因写在标出的句子下面，找不到的句子下面写了也看不见（那样的问题列在后面）
    flags = {index: numbers for index, numbers in flags_by_claim(record, structure).items() if index in shown}
    placement = reasons.place(flags)
    scores = scores_by_claim(record, structure)
    checked = checked_by_claim(record, structure)
    shown_at = Shown(record.get("answer") or "")
    sources = record.get("sources") or []
    pieces: list[str] = []
    position = 0
    pending = ""  # 上一句的原因：放在它的句末标点和引用之后
    for index, claim, (start, end) in claims:
        pieces.append(with_block(link_citations(answer[position:start], prefix, count), pending))
        numbers = flags.get(index, [])
        kinds = [kind_in(reasons.problems[n]) for n in numbers]
        across = bool(kinds) and all(kind.undecided for kind in kinds)  # 字面核对判断不了（跨语言）
        state = "cross" if across else "flagged" if numbers else "ok" if claim.citations else "plain"
        label = (f"？ {kinds[0].label}，字面核对无法判断，请人工核对" if across else "⚠ 被标出" if numbers
                 else "✓ 通过" if claim.citations else "")
        # 被标出的句子里，资料中找不到的那几个字标出来（通过的句子不标：那只会让人分心）
        text = claim_html(answer[start:end], checked.get(index) if numbers else None, shown_at, (start, end))
        if numbers:
            text = f'<a href="#{reasons.anchor(numbers[0])}">{text}</a>'
        pieces.append(f'<span class="claim {state}" title="{label}">{text}</span>{score_badge(scores.get(index))}')
        # 同样的问题只在说它的那一处并排对照：别处只有“同第 N 段”的句子，对照也是同样的
        # 说整个回答的问题（重复、被截断）不是这一句和资料对不对：它们不要对照
        told_here = any(kind_in(reasons.problems[n]).about != "answer"
                        for n in set(numbers) - set(placement.same.get(index, [])))
        side_by_side = comparison(answer[start:end], checked.get(index), shown_at, (start, end), sources, prefix) \
            if told_here and not across else ""
        pending = reasons.block(placement.under.get(index, []), claim.body, scores.get(index), side_by_side,
                                placement.same.get(index, []))
        position = end
    pieces.append(with_block(link_citations(answer[position:], prefix, count), pending))
    body = "".join(pieces)
    paragraphs = [f'<div class="para">{part.replace(chr(10), "<br>")}</div>' for part in body.split("\n\n")
                  if part.strip()]
    rest = reasons.block(placement.unplaced, None, None)
    return f'<div class="answer">{"".join(paragraphs)}</div>' + (f"<h3>不属于某一句的问题</h3>{rest}" if rest else "")


def render_sources(record: Record, prefix: str, evidence: Evidence) -> str:
    sources = record.get("sources") or []
    unused = set(record.get("unused") or [])
    blocks = []
    for number, source in enumerate(sources, 1):
        read = source.get("read")
        how = "读取了全文" if read else "只有搜索摘要" if read is False else ""
        tags = "".join(f'<span class="tag">{tag}</span>' for tag in
                       (how, "未被引用" if number in unused else "", "来自缓存" if source.get("cached") else "") if tag)
        title = escape(source.get("title") or f"资料 {number}")
        link = safe_link(source.get("link")) if source.get("link") else ""
        date = escape(source.get("date") or "")
        css = "source unused" if number in unused else "source"
        blocks.append(f'<div class="{css}" id="{prefix}src-{number}"><div><b>[{number}] {title}</b>{tags}</div>'
                      f'<div class="meta">{link} {date}</div>'
                      f'<div class="text">{evidence.highlight(number, source.get("text") or "")}</div></div>')
    return "<h2>资料</h2>" + "".join(blocks)


def render_repairs(record: Record) -> str:
    repairs = record.get("repairs") or []
    if not repairs:
        return ""
    names = {"recite": "改引", "add_citation": "补上引用", "rewrite": "重写", "delete": "删去"}
    items = []
    for repair in repairs:
        where = f"第 {repair.get('paragraph')} 段：" if repair.get("paragraph") else ""
        after = escape(repair.get("after")) if repair.get("after") else "（删去）"
        items.append(f"<li>{where}{names.get(repair.get('kind'), escape(repair.get('kind')))}："
                     f"<del>{escape(repair.get('before'))}</del> → <ins>{after}</ins>"
                     f"<br><small>{escape(repair.get('reason'))}</small></li>")
    return f'<h2>已修正</h2><ul class="repairs">{"".join(items)}</ul>'


def render_record(record: Record, prefix: str, when: str) -> str:
    evidence = Evidence(prefix, record.get("sources") or [])
    answer = render_answer(record, prefix, evidence)  # 先渲染回答：它决定要高亮哪些证据
    passed = record.get("passed")
    problems = len(record.get("problems") or [])
    verdict = ('<span class="verdict passed">✓ 引用核对通过</span>' if passed else
               f'<span class="verdict failed">⚠ 引用核对没通过：{problems} 个问题，请回到资料核对</span>')
    question = escape(record.get("question") or "（没有记录问题）")
    model = escape(record.get("model") or "未知")
    return (f'<header><h1>{question}</h1><p class="meta">模型：{model} · '
            f'<span class="when">生成时间：{escape(when)}</span></p>{verdict}</header>'
            f"<h2>回答</h2>{answer}{render_unfinished(record)}{render_repairs(record)}"
            f"{render_sources(record, prefix, evidence)}")


def render_unfinished(record: Record) -> str:
    """没有结束的思考（--json 的 unfinished_reasoning）：标明了照样给人看，它不是回答，没有核对。"""
    text = record.get("unfinished_reasoning")
    if not isinstance(text, str) or not text:
        return ""
    return ('<h3>没有结束的思考过程</h3><p class="meta">模型写了 &lt;think&gt;，没有写 &lt;/think&gt;：'
            "它不是回答，没有核对</p>"
            f'<div class="answer"><div class="para">{escape(text).replace(chr(10), "<br>")}</div></div>')


def render_page(records: Sequence[Record], when: str) -> str:
    """records：--json 输出的对象（一个或多个）。返回完整的 HTML 文本。"""
    if len(records) == 1:
        body = render_record(records[0], "", when)
        title = records[0].get("question") or "引用核对"
    else:
        passed = sum(bool(r.get("passed")) for r in records)
        body = (f"<h1>引用核对：{len(records)} 个回答，{passed} 个通过</h1>" +
                "".join(f'<section class="answer-block" id="a{i}">{render_record(r, f"a{i}-", when)}</section>'
                        for i, r in enumerate(records, 1)))
        title = "引用核对"
    return ("<!DOCTYPE html>\n<html lang=\"zh-CN\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>\n")


def save_review_page(planned: PlannedFile, records: Sequence[Record], secrets: Sequence[str], log: Log) -> None:
    """--html：回答已经打印出来之后再写审阅页，写好了在标准错误上说写到了哪里（回答问题和 --verify 都走这里）。
    写不出来时抛 OutputFileError（退出码 2），已经打印的回答不受影响。
    密钥在转义成 HTML 之前就从数据里遮掉（转义之后 & < " 会变样，就找不到了）；log 写的那一行也遮密钥。"""
    page = render_page(mask_data(list(records), secrets), datetime.now().strftime("%Y-%m-%d %H:%M"))
    write_file(planned, page)
    log(f"审阅页已写到 {literal(planned.path)}")
