"""肯定还是否定：句子和资料里最接近的一句在同一处说了相反的话（polarity_mismatch）。和数字的规则一样是确定的规则。

“RAID5 不能容忍一块盘损坏”对“RAID5 可以容忍一块盘损坏”、“没有自带硬盘”对“自带硬盘”：词全都对得上，
支持分很高，可是意思正好相反。规则只看同一处：一边有否定词（不、没有、没、无法、不能、不会、未、无、非），否定的那个词（“容忍”“自带”）在另一边也出现，而且前面紧挨着的词（“RAID5”）
或者后面紧跟的词（“一块”）也一样，中间却没有否定词——就是同一处说反了。两边都有否定（“不能容忍两块盘”对
“不能容忍两块盘”）不算；另一边同一处既有肯定又有否定的说法（“可以容忍一块……不能容忍两块”对“不能容忍两块”）也不算。“不仅”“不过”“无论”“非常”“无线”“未来”“不同”这类词里的“不”“无”“非”“未”不是否定。
在 CiteCheck dev 上（bench/evaluate_citecheck.py 打印）它没有标出任何一条有依据的陈述。它证明不了的：
换一个说法的否定（“容忍不了”“难以容忍”“拒绝”）、反义词（“支持”对“反对”）、隔得远的否定，都看不出来。
只看中文：同样的规则用在英文（not、n't 对肯定的说法）上，在 AttributionBench 的 dev 上标出的有依据、没依据的各一条，
误报多了，所以没有用。只用标准库。
"""
import re
from dataclasses import dataclass

from sourced_answers.checker.reading import Seen

NEGATION = re.compile(r"并非|并不|从不|从未|从来不|从来没有|绝不|不再|没有|无法|不能|不会|不可|不是|不要|请勿"
                      r"|没|不|未|无|非|别|勿")
# 含否定用字、却不是否定的词（它们里面的“不”“无”“非”“未”不算）
NOT_NEGATION = re.compile(
    r"不仅|不但|不过|不管|不论|无论|非常|无线|未来|不同|不少|不断|不久|无数|无限|不错|不得不|不妨|不禁|未必|"
    r"非但|无非|除非|是非|毫无疑问|无疑|无人|不锈|不动产|无损|无缝|无关|不得了|莫非|南非|非洲|无锡|未知|不如|不止|"
    r"不只|不光|非得|非要|无所谓|不然|要不|不由|未尝|无偿|不利|不良|不安|不满|不便|不平|不幸|不当|不妥|"
    r"不对称|别人|别的|别处|别名|别墅|特别|区别|分别|级别|类别|识别|差别|性别|个别|告别|辨别|派别|鉴别|判别|离别|送别|道别|话别|诀别|惜别|久别|勿忘|无形|无意|不时|不已|非法|非凡|并无|不外乎|无与伦比|不可或缺|不可思议|不言而喻"
)
# 否定词和它否定的词之间可以有的字（“不能够容忍”“不会被删除”“没有再出现”）
BETWEEN = re.compile(r"[能会可够是再太都也得要该应被][以能够]?")
WORD = r"[\u4e00-\u9fff]{2}|[A-Za-z0-9]+"
NEXT_WORD = re.compile(rf"[ \t]*({WORD}|[\u4e00-\u9fff])")
WORD_BEFORE = re.compile(rf"({WORD})[ \t]*$")
AFTER_WORD = re.compile(rf"[ \t]*({WORD})")  # 后一个词要两个字以上：一个字（“部”“的”）到处都是
CLAUSE_BREAK = re.compile(r"[，。,.;；：:！？!?、\n]")
MAX_LENGTH = 2000
# 否定词前面最多这么多个字里找“同一处”的前一个词，否定词和它否定的词之间也最多隔这么多个字
GAP = 4


Span = tuple[int, int]


@dataclass(frozen=True)
class Flip:
    """句子和资料在同一处说反了：两边各是哪一段（在读出来的文字里的位置），以及是哪一边否定。"""
    claim: Span  # 句子里的那一段
    source: Span  # 资料里的那一段
    claim_negated: bool  # True：句子否定、资料肯定；False：资料否定、句子肯定


def polarity_flip(claim: Seen, evidence: Seen) -> Flip | None:
    """句子 claim 和资料里最接近的一句 evidence 在同一处说反了时给出 Flip，否则 None。两边都是读出来的文字
    （reading.py：**不**能、不\u200b能、沒有这些写法已经统一）。比 MAX_LENGTH 还长的“句子”（没有标点的一整页、
    乱码）不看：一句话里的每个否定都要在另一边找一遍，长了就是平方级的。"""
    if len(claim) > MAX_LENGTH or len(evidence) > MAX_LENGTH:
        return None
    for negated, other, claim_negated in ((claim, evidence, True), (evidence, claim, False)):
        found = chinese_flip(negated, other)
        if found:
            said, there = found
            return Flip(said if claim_negated else there, there if claim_negated else said, claim_negated)
    return None


# ---------- 中文 ----------

def chinese_flip(negated: str, other: str) -> tuple[Span, Span] | None:
    """negated 里一处否定在 other 的同一处是肯定：(negated 里的那一段, other 里的那一段) 的位置。"""
    if not NEGATION.search(negated):
        return None
    ignored = [match.span() for match in NOT_NEGATION.finditer(negated)]
    for match in NEGATION.finditer(negated):
        start, end = match.span()
        if any(low <= start < high for low, high in ignored):
            continue
        before = WORD_BEFORE.search(negated, max(0, start - GAP - 2), start)
        between = BETWEEN.match(negated, end)
        word = NEXT_WORD.match(negated, between.end() if between else end)
        if not word:
            continue
        after = AFTER_WORD.match(negated, word.end())
        place = affirmed_place(other, before.group(1) if before else None, word.group(1),
                               after.group(1) if after else None)
        if place:
            return stripped(negated, before.start() if before else start, (after or word).end()), place
    return None


def stripped(text: str, start: int, end: int) -> Span:
    """[start, end) 去掉两头的空白之后的位置。"""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def affirmed_place(other: str, before: str | None, word: str, after: str | None) -> Span | None:
    """other 里 word 出现在同一处（前一个词 before 在它前面不远，或者后一个词 after 紧跟着它）而且前面没有否定时，
    返回那一段的位置。同一处也有一个否定的说法时返回 None（两边都否定，或者说不清讲的是哪一处）。别处的说法不管。
    word 只有一个字（“不高”的“高”）时，只认前一个词也一样的地方：一个字到处都是。"""
    found = None
    ignored = [match.span() for match in NOT_NEGATION.finditer(other)]
    for match in re.finditer(re.escape(word), other):
        start = match.start()
        window = other[max(0, start - GAP - (len(before) if before else 0)):start]
        window = CLAUSE_BREAK.split(window)[-1]
        near = window[-GAP:]
        offset = start - len(near)
        negated = any(not any(low <= offset + hit.start() < high for low, high in ignored)
                      for hit in NEGATION.finditer(near))
        following = other[match.end():].lstrip(" \t")
        same_left = bool(before) and str(before) in window
        same_right = bool(after) and len(word) > 1 and following.startswith(str(after))
        if not (same_left or same_right):
            continue
        if negated:
            return None
        end = match.end() + (len(other) - match.end() - len(following)) + (len(str(after)) if same_right else 0)
        found = found or stripped(other, start - len(window), end)
    return found
