"""一个句子和一条资料比较：重合度、资料里找不到的一长串内容、最接近的一句。"""
from dataclasses import dataclass

from sourced_answers.checker.source_index import SourceIndex
from sourced_answers.checker.tokens import ClaimWords

# 句中连续这么多个内容词在资料里都找不到，就认为这一段是资料之外的内容
NOVEL_RUN = 11
# 整体重合度到这么高时，不再因为一段找不到的内容判它编造
NOVEL_GATE = 0.6
# 一串找不到的内容中间，要连着这么多个词能在资料里找到才算断开（偶然撞上一个常见词不算）
RUN_BREAK = 2


@dataclass
class Support:
    """一个句子和一条资料的比较结果。"""
    source: int
    overlap: float
    novel: str | None  # 资料里完全找不到的一长串内容（没有则为 None）
    evidence: str | None
    sentence: int | None = None  # evidence 是资料的第几句

    def passes(self, threshold: float) -> bool:
        return self.overlap >= threshold and (self.novel is None or self.overlap >= NOVEL_GATE)


def compare(body: str, words: ClaimWords, index: SourceIndex, number: int) -> Support:
    """句子（去掉引用后的文字 body 及其内容词 words）和一条资料比较。"""
    content = words.content
    distinct = words.distinct
    if not distinct:
        return Support(number, 1.0, None, None)
    hits, best_sentence = index.best_window(distinct)
    evidence = index.sentences[best_sentence] if best_sentence is not None else None
    run_start = 0
    run = 0
    novel: tuple[int, int] | None = None
    novel_text: str | None = None
    matched = 0
    known = index.postings
    for token, start, end, _ in content:
        if token in known:
            matched += 1
            if matched >= RUN_BREAK:
                run = 0
            continue
        matched = 0
        if run == 0:
            run_start = start
        run += 1
        if run >= NOVEL_RUN:
            novel = (run_start, end)
    if novel:
        # 把整段找不到的内容都显示出来
        novel_text = body[novel[0]:novel[1]]
        for token, start, end, _ in content:
            if start >= novel[1]:
                if token in known:
                    break
                novel_text = body[novel[0]:end]
    return Support(number, round(hits / len(distinct), 4), novel_text, evidence, best_sentence)
