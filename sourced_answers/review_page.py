"""核对结果的审阅页（--html FILE）：一个自带样式、不含任何脚本的 HTML 文件，离线、从 file:// 打开都能看。

页面上的文字来自网页、搜索结果和模型，一律转义；只有 http、https 的地址才做成链接；
页面带一条严格的 Content-Security-Policy（不许任何脚本、外部资源），即使哪里漏了转义也不会执行。
每个问题的原因只写一次，紧跟在它那一句下面（整段的问题在那一段的最后一句下面）；
交互只用锚点和 :target：点原因里的证据，跳到资料里高亮的那一句。
"""
import html
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeGuard

from sourced_answers.checker import (
    PROBLEM_KINDS,
    Claim,
    Source,
    SourceIndexes,
    Span,
    citation_marks,
    claim_words,
    claims_with_positions,
    compare,
    source_sentences,
    support_model,
    without_citations,
)
from sourced_answers.output_files import PlannedFile, write_file
from sourced_answers.records import Record
from sourced_answers.safe_output import CONTROL
from sourced_answers.text import mask_data

Problem = dict[str, Any]
Log = Callable[[str], None]

CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; "
       "base-uri 'none'; form-action 'none'")
STYLE = """
body{font:16px/1.7 system-ui,"PingFang SC","Noto Sans CJK SC",sans-serif;max-width:60em;margin:2em auto;
padding:0 1em;color:#222}
h1{font-size:1.4em}.meta{color:#555}.verdict{font-weight:bold;padding:.4em .8em;border-radius:4px;display:inline-block}
.verdict.passed{background:#e6f4ea;color:#1e6b35}.verdict.failed{background:#fdecea;color:#8a1c12}
.claim.ok{border-bottom:2px solid #9fd3ae}.claim.flagged{background:#fdecea;border-bottom:2px solid #d93025}
.claim.flagged::before{content:"⚠ ";color:#d93025}
.claim.cross{background:#fff4ce;border-bottom:2px dashed #b58900}.claim.cross::before{content:"？ ";color:#8a6d00}
.claim a{color:inherit;text-decoration:none}
.why{margin:.2em 0 .7em 1em;padding:.1em 0 .1em .7em;border-left:3px solid #d93025;font-size:.92em;color:#444}
.reason{margin:.2em 0}.reason:target{outline:2px solid #d93025}.reason .kind{color:#8a1c12}
.reason.cross .kind{color:#8a6d00}.why.cross{border-left-color:#b58900}
.source{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1em 0}.source:target{border-color:#1a73e8}
.source .text{white-space:pre-wrap;max-height:18em;overflow:auto;background:#fafafa;padding:.5em;font-size:.92em}
.unused{color:#777}.tag{font-size:.8em;border:1px solid #bbb;border-radius:3px;padding:0 .3em;margin-left:.4em}
.score{font-size:.72em;border:1px solid #bbb;border-radius:3px;padding:0 .25em;margin:0 .2em;color:#1e6b35}
.score.low{color:#8a1c12;border-color:#e0a39c}
mark{background:#fff3b0}mark:target{background:#ffd24d;outline:2px solid #d93025}
.repairs li{margin:.3em 0}.answer .para{margin:.6em 0}section.answer-block{border-top:3px solid #eee;margin-top:2em}
"""


def escape(text: str | None) -> str:
    """转义成 HTML；控制字符和双向控制符去掉（和终端输出一样：它们能让页面上显示的顺序和实际内容不一样）。"""
    return html.escape(CONTROL.sub("", text or ""), quote=True)


def safe_link(url: str | None, label: str | None = None) -> str:
    """只有 http、https 的地址做成链接；其余（javascript: 之类）只显示为文字。"""
    url = (url or "").strip()
    shown = escape(label if label is not None else url)
    if url.lower().startswith(("http://", "https://")):
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


def flags_by_claim(record: Record, claims: Sequence[tuple[Claim, Span | None]]) -> dict[int, list[int]]:
    """每个句子（在 claims 里的下标）标着哪几个问题（在 record["problems"] 里的下标）。
    用时和句子数、问题数成正比（一个回答可能有上万个列表项）：

      · 引了不存在的资料：引了这个编号的每一句（同一组编号只算一次）；
      · 说的是某一句的问题：同一段里文字和引用都相同的句子按顺序一一对应（两句一样的话、两个问题，各标一个），
        问题比句子少时，后面那几句跟着标最后一个；文字相同、引用不同的两句（一句引对了、一句引错了）分得开；
      · 整段没有引用：这一段里依次出现在那段文字中的、没有引用的句子。"""
    flags: dict[int, list[int]] = {}
    same_text: dict[tuple[int, str, tuple[int, ...]], list[int]] = {}  # (段, 文字, 引用) → 句子
    loose_text: dict[tuple[int, str], list[int]] = {}  # 引用对不上时退一步：只看文字
    same_uncited: dict[tuple[int, str], list[int]] = {}  # 同上，只算没有引用的句子
    uncited: dict[int, list[int]] = {}
    by_citation: dict[int, list[int]] = {}
    for index, (claim, _) in enumerate(claims):
        text = without_citations(claim.text)
        same_text.setdefault((claim.paragraph, text, cited_numbers(claim.citations)), []).append(index)
        loose_text.setdefault((claim.paragraph, text), []).append(index)
        if not claim.citations:
            same_uncited.setdefault((claim.paragraph, text), []).append(index)
            uncited.setdefault(claim.paragraph, []).append(index)
        for number in set(claim.citations):
            by_citation.setdefault(number, []).append(index)
    problems = [(problem, problem_key(problem)) for problem in record.get("problems") or []]
    totals: dict[tuple[str, int, str, tuple[int, ...]], int] = {}
    for _, key in problems:
        if key:
            totals[key] = totals.get(key, 0) + 1
    taken: dict[tuple[str, int, str, tuple[int, ...]], int] = {}  # (种类, 段, 文字, 引用) → 已经对上了几句
    missing_seen: set[tuple[int, ...]] = set()
    for problem_index, (problem, key) in enumerate(problems):
        kind, paragraph = problem.get("kind"), problem.get("paragraph")
        if kind == "missing_source":
            numbers = tuple(sorted({n for n in problem.get("citations") or [] if isinstance(n, int)}))
            if numbers not in missing_seen:
                missing_seen.add(numbers)
                for index in sorted({i for n in numbers for i in by_citation.get(n, [])}):
                    flags.setdefault(index, []).append(problem_index)
            continue
        if key is None or not isinstance(paragraph, int):
            continue
        text = key[2]
        if kind == "uncited_paragraph":
            matching = same_uncited.get((paragraph, text), [])
        else:
            matching = same_text.get((paragraph, text, key[3])) or loose_text.get((paragraph, text), [])
        if matching:
            count = taken.get(key, 0)
            taken[key] = count + 1
            if count < len(matching):
                rest = matching[count + 1:] if count + 1 == totals[key] else []  # 最后一个问题：剩下的句子也标它
                for index in (matching[count], *rest):
                    flags.setdefault(index, []).append(problem_index)
            continue
        if kind == "uncited_paragraph":  # 整段文字：没有引用的句子在里面依次出现，每句只在紧跟着的一小段里找
            position = 0
            for index in uncited.get(paragraph, []):
                claim_text = without_citations(claims[index][0].text)
                found = text.find(claim_text, position, position + len(claim_text) + NEARBY)
                if found >= 0:
                    flags.setdefault(index, []).append(problem_index)
                    position = found + len(claim_text)
    return flags


NEARBY = 64  # 一段里相邻两句之间最多隔着这么多字（句末标点、空白）


def cited_numbers(citations: object) -> tuple[int, ...]:
    return tuple(sorted({n for n in citations if isinstance(n, int)})) if isinstance(citations, list) else ()


def problem_key(problem: Problem) -> tuple[str, int, str, tuple[int, ...]] | None:
    """说的是某一句（或某一段）的问题：(种类, 段, 去掉引用标记的文字, 引用的编号)；别的（引了不存在的资料）为 None。"""
    paragraph, sentence = problem.get("paragraph"), problem.get("sentence")
    if problem.get("kind") == "missing_source" or not isinstance(paragraph, int) or not isinstance(sentence, str) \
            or not sentence:
        return None
    return str(problem.get("kind")), paragraph, without_citations(sentence), cited_numbers(problem.get("citations"))


def place_reasons(problems: Sequence[Problem], flags: dict[int, list[int]]) -> tuple[dict[int, list[int]], list[int]]:
    """每个问题的原因只写一次：句子的问题写在它标出的第一句下面，整段没有引用写在那一段的最后一句下面
    （一段有几行时不是每行一份）。返回 (句子下标 → 写在它下面的问题下标, 没有对上任何句子的问题下标)。"""
    place: dict[int, int] = {}
    for index, numbers in flags.items():
        for number in numbers:
            known = place.get(number)
            whole_paragraph = problems[number].get("kind") == "uncited_paragraph"
            if known is None or (index > known if whole_paragraph else index < known):
                place[number] = index
    under: dict[int, list[int]] = {}
    unplaced = []
    for number in range(len(problems)):
        if number in place:
            under.setdefault(place[number], []).append(number)
        else:
            unplaced.append(number)
    return under, unplaced


def with_block(gap: str, block: str) -> str:
    """把原因（一个块）放进两句之间的文字 gap（已经是 HTML）：放在上一句的句末标点、引用之后，
    换行之前；这个块本身就另起一行，所以它后面那个单独的换行不再要（空行是段落的分界，留着）。"""
    if not block:
        return gap
    newline = gap.find("\n")
    if newline < 0:
        return gap + block
    if gap.startswith("\n\n", newline):
        return gap[:newline] + block + gap[newline:]
    return gap[:newline] + block + gap[newline + 1:]


def is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_source_number(value: object, count: int) -> TypeGuard[int]:
    """记录里的一个资料编号：整数，1…count。"""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= count


class Evidence:
    """要在资料正文里高亮的句子：(资料编号, 句子) → 锚点 id。"""

    def __init__(self, prefix: str, sources: Sequence[Record]) -> None:
        self.prefix = prefix
        self.sources = sources
        self.anchors: dict[tuple[int, str], str] = {}
        self.by_source: dict[int, list[tuple[str, str]]] = {}
        self.sentences: dict[int, set[str]] = {}  # 每条资料正文里的句子（用到时才切，每条只切一次）

    def anchor(self, source: int, sentence: str) -> str:
        key = (source, sentence)
        if key not in self.anchors:
            self.anchors[key] = f"{self.prefix}ev-{len(self.anchors) + 1}"
            self.by_source.setdefault(source, []).append((sentence, self.anchors[key]))
        return self.anchors[key]

    def find(self, numbers: Sequence[int], sentence: object) -> str | None:
        """证据句在资料里高亮处的锚点。只认所引资料正文里的句子：核对时资料的标题也算一句，
        可标题不是证据（编出来的句子常常只和标题沾边）。哪条的正文里都没有时为 None。"""
        if not isinstance(sentence, str) or not sentence:
            return None
        for number in numbers:
            source = self.sources[number - 1]
            if number not in self.sentences:
                self.sentences[number] = set(source_sentences(str(source.get("text") or "")))
            if sentence in self.sentences[number] and sentence != str(source.get("title") or "").strip():
                return self.anchor(number, sentence)
        return None

    def highlight(self, number: int, text: str) -> str:
        """资料正文，转义后把要高亮的句子包进 <mark id=…>。"""
        spots = []
        for sentence, anchor in self.by_source.get(number, []):
            start = text.find(sentence) if sentence else -1
            if start >= 0:
                spots.append((start, start + len(sentence), anchor))
        pieces = []
        position = 0
        for start, end, anchor in sorted(spots):
            if start < position:
                continue
            pieces.append(escape(text[position:start]))
            pieces.append(f'<mark id="{anchor}">{escape(text[start:end])}</mark>')
            position = end
        pieces.append(escape(text[position:]))
        return "".join(pieces)


class Reasons:
    """一个回答里每个问题的原因：种类的中文名、核对给出的说明、数字（每个只写一次）、证据、更合适的资料。"""

    def __init__(self, record: Record, prefix: str, evidence: Evidence) -> None:
        self.problems: list[Problem] = [p if isinstance(p, dict) else {} for p in record.get("problems") or []]
        self.sources = record.get("sources") or []
        self.prefix = prefix
        self.evidence = evidence
        self.indexes: SourceIndexes | None = None  # 要算更合适的资料时才建

    def anchor(self, number: int) -> str:
        return f"{self.prefix}why-{number}"

    def block(self, numbers: Sequence[int], body: str | None, badge: float | None) -> str:
        """写在一句下面的原因（numbers：问题的下标）。body：这句去掉引用后的文字；badge：句子旁边已经显示的支持分。"""
        if not numbers:
            return ""
        cross = all(self.problems[n].get("kind") == "cross_language" for n in numbers)
        reasons = "".join(self.reason(n, body, badge) for n in numbers)
        return f'<div class="why{" cross" if cross else ""}">{reasons}</div>'

    def reason(self, number: int, body: str | None, badge: float | None) -> str:
        problem = self.problems[number]
        kind = str(problem.get("kind") or "")
        message = str(problem.get("message") or "") or "（没有说明）"
        mark, css = ("？", "reason cross") if kind == "cross_language" else ("⚠", "reason")
        # 新加的问题种类这里不用改：名字取自 PROBLEM_KINDS，不认识的种类也照样显示它的说明
        line = f'<b class="kind">{mark} {escape(PROBLEM_KINDS.get(kind, "其他问题"))}</b>：{one_line(message)}'
        overlap, score = problem.get("overlap"), problem.get("score")
        figures = []
        if is_number(overlap) and "重合度" not in message:  # 说明里已经写了重合度的，不再写一遍
            figures.append(f"重合度 {overlap:.0%}")
        if is_number(score) and (badge is None or f"{score:.2f}" != f"{badge:.2f}"):  # 句子旁边已经有了就不重复
            figures.append(f"支持分 {score:.2f}")
        if figures:
            line += f"（{'，'.join(figures)}）"
        cited = [n for n in problem.get("citations") or [] if is_source_number(n, len(self.sources))]
        if is_number(overlap) and cited:  # 和所引资料比较过：给出证据，或者明说没有
            target = self.evidence.find(cited, problem.get("evidence"))
            if target:
                line += f'<br>所引资料里最接近的一句：<a href="#{target}">{escape(problem["evidence"])}</a>'
            else:
                line += "<br>所引资料的正文里没有找到和这句话相近的一句"
        better = problem.get("better_source")
        if is_source_number(better, len(self.sources)):
            sentence = body if body is not None else without_citations(str(problem.get("sentence") or ""))
            line += (f'<br>可能更合适的资料：<a href="#{self.prefix}src-{better}">[{better}]</a>'
                     f"（这句话和它的{self.figures_with(better, sentence)}）")
        return f'<div class="{css}" id="{self.anchor(number)}">{line}</div>'

    def figures_with(self, number: int, body: str) -> str:
        """这句话和第 number 条资料的重合度、支持分：用核对时的同一套函数算（建议的资料自己的数字，不是所引资料的）。"""
        if self.indexes is None:
            self.indexes = SourceIndexes([Source.from_json(source) for source in self.sources])
        support = compare(body, claim_words(body), self.indexes(number), number)
        return f"重合度 {support.overlap:.0%}，支持分 {support_model().score(support.features):.2f}"


def one_line(text: str) -> str:
    """转义，换行换成空格：原因插在回答中间，回答按空行分段，原因里不能有换行；
    整段没有引用的说明里引着那一段的几行，那几行就在它上面，连成一行读就够了。"""
    return escape(" ".join(text.split("\n")))


def scores_by_claim(record: Record, claims: Sequence[tuple[Claim, Span | None]]) -> dict[int, float]:
    """每个句子（在 claims 里的下标）的支持分，取自记录的 claims（同一段里一样的句子按出现的顺序对应）。"""
    waiting: dict[tuple[object, str], list[float]] = {}
    for checked in record.get("claims") or []:
        if isinstance(checked, dict) and isinstance(checked.get("score"), int | float):
            key = (checked.get("paragraph"), without_citations(str(checked.get("sentence") or "")))
            waiting.setdefault(key, []).append(float(checked["score"]))
    found: dict[int, float] = {}
    for index, (claim, _) in enumerate(claims):
        queue = waiting.get((claim.paragraph, without_citations(claim.text)))
        if claim.citations and queue:
            found[index] = queue.pop(0)
    return found


def score_badge(score: float | None) -> str:
    if score is None:
        return ""
    level = "low" if score < 0.5 else "high"
    return f'<span class="score {level}" title="支持分：所引资料支持这句话的可能，0 到 1">{score:.2f}</span>'


def visible_claims(answer: str) -> list[tuple[Claim, Span]]:
    """回答里能在原文中找到、互不重叠的句子（按出现的顺序）：页面上标出的就是这些。"""
    claims: list[tuple[Claim, Span]] = []
    position = 0
    for claim, span in claims_with_positions(answer):
        if span and span[0] >= position:
            claims.append((claim, span))
            position = span[1]
    return claims


def render_answer(record: Record, prefix: str, evidence: Evidence) -> str:
    """回答的正文：句子按核对结论标出，每个问题的原因紧跟在它那一句下面；对不上任何一句的问题列在后面。"""
    answer = record.get("answer") or ""
    count = len(record.get("sources") or [])
    claims = visible_claims(answer)
    reasons = Reasons(record, prefix, evidence)
    flags = flags_by_claim(record, claims)
    under, unplaced = place_reasons(reasons.problems, flags)
    scores = scores_by_claim(record, claims)
    pieces: list[str] = []
    position = 0
    pending = ""  # 上一句的原因：放在它的句末标点和引用之后
    for index, (claim, (start, end)) in enumerate(claims):
        pieces.append(with_block(link_citations(answer[position:start], prefix, count), pending))
        numbers = flags.get(index, [])
        across = bool(numbers) and all(reasons.problems[n].get("kind") == "cross_language" for n in numbers)
        state = "cross" if across else "flagged" if numbers else "ok" if claim.citations else "plain"
        label = ("？ 跨语言，字面核对无法判断，请人工核对" if across else "⚠ 被标出" if numbers
                 else "✓ 通过" if claim.citations else "")
        text = escape(answer[start:end])
        if numbers:
            text = f'<a href="#{reasons.anchor(numbers[0])}">{text}</a>'
        pieces.append(f'<span class="claim {state}" title="{label}">{text}</span>{score_badge(scores.get(index))}')
        pending = reasons.block(under.get(index, []), claim.body, scores.get(index))
        position = end
    pieces.append(with_block(link_citations(answer[position:], prefix, count), pending))
    body = "".join(pieces)
    paragraphs = [f'<div class="para">{part.replace(chr(10), "<br>")}</div>' for part in body.split("\n\n")
                  if part.strip()]
    rest = reasons.block(unplaced, None, None)
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
    return (f'<header><h1>{question}</h1><p class="meta">模型：{model} · 生成时间：{escape(when)}</p>{verdict}</header>'
            f"<h2>回答</h2>{answer}{render_repairs(record)}{render_sources(record, prefix, evidence)}")


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
            '<meta name="referrer" content="no-referrer">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>\n")


def save_review_page(planned: PlannedFile, records: Sequence[Record], secrets: Sequence[str], log: Log) -> None:
    """--html：回答已经打印出来之后再写审阅页，写好了在标准错误上说写到了哪里（回答问题和 --verify 都走这里）。
    写不出来时抛 OutputFileError（退出码 2），已经打印的回答不受影响。
    密钥在转义成 HTML 之前就从数据里遮掉（转义之后 & < " 会变样，就找不到了）；log 写的那一行也遮密钥。"""
    page = render_page(mask_data(list(records), secrets), datetime.now().strftime("%Y-%m-%d %H:%M"))
    write_file(planned, page)
    log(f"审阅页已写到 {planned.path}")
