"""肯定还是否定：句子和资料里最接近的一句在同一处说了相反的话。

“RAID5 不能容忍一块盘损坏”对“RAID5 可以容忍一块盘损坏”、“没有自带硬盘”对“自带硬盘”：词全都对得上，
支持分很高，可是意思正好相反。规则只看同一处：一边有否定词（不、没有、没、无法、不能、不会、未、无、别、勿、并非），
否定的那个词（“容忍”“自带”）在另一边也出现，而且在同一处——否定的一边前面有词（“RAID5”）时另一边前面不远处也有
这个词，否定就在句首时另一边后面紧跟同一个词（“一块”）——另一边那一句里却没有任何否定：就是同一处说反了。

说的不是同一件事、或者根本不是断言的，不算说反（这几条是在 CiteCheck dev 拟合部分的回答句子上看出来的，
没有用验证部分）：
  · 问句：所在的句子以问号结尾、分句以“吗”“呢”结尾，或者有“是否”“能不能”“有没有”这类问法（A 不 A 里的“不”
    本来就不是否定）；资料的标题、Markdown 标题；假设和让步的分句（“如果”“即使”“假如”）和同一句里它后面的结果；
  · 选择：“全时四驱或者非全时四驱”“是…还是不…”：否定紧跟在“或、或者、还是、抑或”后面；
  · 委婉的说法：另一边那一句有“很难”“难以”“不易”“很少”“几乎不”“避免”“防止”“禁止”这类词，不是相反的意思；
  · 另一件事：后面紧跟的词两边都有、却不一样（“不能悬浮在地面上”对“可以悬浮在空中”），“非”作词头
    （“非审计专业”“非对称”）。
“不仅”“不过”“无论”“非常”“无线”“未来”“不同”这类词里的“不”“无”“非”“未”不是否定。
它证明不了的：换一个说法的否定（“容忍不了”）、反义词（“支持”对“反对”）、隔得远的否定，都看不出来。
这不是确定的规则：它是支持分的一个特征（features.py 的 polarity_flip），权重在 CiteCheck dev 的拟合部分上拟合；
在没见过的数据上它标出的有一半以上是有依据的句子（issue 36 量到 7 条里 2 条对），达不到当硬规则的准确率。
只看中文（英文的同样规则在 AttributionBench 的 dev 上误报多了）。只用标准库。
"""
import re
from dataclasses import dataclass

from sourced_answers.checker.reading import Seen

NEGATION = re.compile(r"并非|绝非|并不|从不|从未|从来不|从来没有|绝不|不再|没有|无法|不能|不会|不可|不是|不要|请勿"
                      r"|没|不|未|无|别|勿")
# 含否定用字、却不是否定的词（它们里面的“不”“无”“非”“未”不算）
NOT_NEGATION = re.compile(
    r"不仅|不但|不过|不管|不论|无论|非常|无线|未来|不同|不少|不断|不久|无数|无限|不错|不得不|不妨|不禁|未必|"
    r"非但|无非|除非|是非|毫无疑问|无疑|无人|不锈|不动产|无损|无缝|无关|不得了|莫非|南非|非洲|无锡|未知|不如|不止|"
    r"不只|不光|非得|非要|无所谓|不然|要不|不由|未尝|无偿|不利|不良|不安|不满|不便|不平|不幸|不当|不妥|"
    r"不对称|是不是|能不能|会不会|要不要|有没有|可不可以|好不好|对不对|行不行|用不用|需不需要|该不该|算不算|"
    r"别人|别的|别处|别名|别墅|特别|区别|分别|级别|类别|识别|差别|性别|个别|告别|辨别|派别|鉴别|判别|离别|送别|道别|话别|诀别|惜别|久别|勿忘|无形|无意|不时|不已|非法|非凡|并无|不外乎|无与伦比|不可或缺|不可思议|不言而喻"
)
# 否定词和它否定的词之间可以有的字（“不能够容忍”“不会被删除”“没有再出现”）
BETWEEN = re.compile(r"[能会可够是再太都也得要该应被][以能够]?")
WORD = r"[\u4e00-\u9fff]{2}|[A-Za-z0-9]+"
NEXT_WORD = re.compile(rf"[ \t]*({WORD}|[\u4e00-\u9fff])")
# 否定词前面的词：跳过“也”“都”“还”这类副词（“美国也不会卷入战争”的前一个词是“美国”）
WORD_BEFORE = re.compile(rf"({WORD})[ \t]*(?:一般|通常|往往|也|都|还|就|并|则|却|又|再|更|才|均|皆|亦)?[ \t]*$")
# 问句：问号结尾的句子、“吗”“呢”结尾的分句，“是否”这类问法
QUESTION_END = re.compile(r"[？?][ \t\"”’）)]*$")
QUESTION_CLAUSE = re.compile(r"[吗呢][ \t\"”’）)]*$")
QUESTION_WORDS = re.compile(r"是否|能否|可否|是不是|能不能|会不会|要不要|有没有|可不可以|需不需要|该不该")
# 假设、让步：“即使孩子不和异性交往”“如果不开启”说的不是事实
HYPOTHETICAL = re.compile(r"即使|即便|如果|假如|假设|要是|倘若|万一|哪怕|就算|若(?!干)")
SENTENCE_BREAK = re.compile(r"[。！？!?；;\n]")
# 选择：否定紧跟在“或、或者、还是、抑或”后面（“全时四驱或者非全时四驱”“要还是不要”）
ALTERNATIVE = re.compile(r"(?:或者|或是|还是|抑或|或)[ \t]*$")
# 委婉、否定意味的词：另一边那一句有它们时，不算说反（“很难握紧”对“不能握紧”）
HEDGE = re.compile(r"很难|难以|不易|不大|不太|很少|较少|极少|鲜有|几乎不|几乎没有|较难|避免|防止|禁止|杜绝|拒绝|切勿"
                   r"|难")
# 量词开头的词（“两块”“三个”）：两边后面紧跟的数量不一样时照样算同一处（数量由数字的规则比）
COUNTED = re.compile(r"[0-9]|[一二两三四五六七八九十百千万几多每各整半][个块盘位台张条项本部只件次种份人名元倍层年天]")
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
        if any(low <= start < high for low, high in ignored) or not asserted(negated, start):
            continue
        before = WORD_BEFORE.search(negated, max(0, start - GAP - 4), start)
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


def asserted(text: str, position: int) -> bool:
    """position 所在的地方是在断言：不在问句里、不在假设或让步的分句里，也不是选择里的一项（“或者非全时四驱”）。"""
    if ALTERNATIVE.search(text, max(0, position - 3), position):
        return False
    sentence_start = max((m.end() for m in SENTENCE_BREAK.finditer(text, 0, position)), default=0)
    following = SENTENCE_BREAK.search(text, position)
    sentence_end = following.end() if following else len(text)
    if QUESTION_END.search(text, sentence_start, sentence_end):
        return False
    clause = clause_around(text, position, position)
    if HYPOTHETICAL.search(text, sentence_start, position) or HYPOTHETICAL.search(clause):
        return False  # 假设、让步的分句，和它后面说的结果（“如果不开启，系统不会备份”）
    return not (QUESTION_WORDS.search(clause) or QUESTION_CLAUSE.search(clause))


def stripped(text: str, start: int, end: int) -> Span:
    """[start, end) 去掉两头的空白之后的位置。"""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def clause_around(text: str, start: int, end: int) -> str:
    """[start, end) 所在的那个分句（前后到逗号、句号这类标点为止）。"""
    left = max((m.end() for m in CLAUSE_BREAK.finditer(text, 0, start)), default=0)
    right = CLAUSE_BREAK.search(text, end)
    return text[left:right.start() if right else len(text)]


def has_negation(text: str) -> bool:
    """text 里有没有否定或委婉的否定（“不仅”“不同”这类词里的字不算）。"""
    if HEDGE.search(text):
        return True
    ignored = [match.span() for match in NOT_NEGATION.finditer(text)]
    return any(not any(low <= hit.start() < high for low, high in ignored) for hit in NEGATION.finditer(text))


def affirmed_place(other: str, before: str | None, word: str, after: str | None) -> Span | None:
    """other 里 word 出现在同一处而且那个分句里没有否定时，返回那一段的位置（见模块说明）。
    同一处也有一个否定、委婉的说法时返回 None（两边都否定，或者说不清讲的是哪一处）。别处的说法不管。
    word 只有一个字（“不高”的“高”）时，只认前一个词也一样的地方：一个字到处都是。"""
    found = None
    for match in re.finditer(re.escape(word), other):
        start = match.start()
        window = other[max(0, start - GAP - (len(before) if before else 0)):start]
        window = CLAUSE_BREAK.split(window)[-1]
        following = other[match.end():].lstrip(" \t")
        next_word = AFTER_WORD.match(following)
        same_left = bool(before) and str(before) in window
        same_right = bool(after) and len(word) > 1 and following.startswith(str(after))
        if not (same_left or same_right):
            continue
        if has_negation(clause_around(other, start, match.end())) or not asserted(other, start):
            return None  # 同一处也有否定、委婉的说法，或者不是断言：说不清
        if not (same_left if before else same_right):
            continue
        if after and next_word and next_word.group(1) != after and not COUNTED.match(next_word.group(1)) \
                and not COUNTED.match(after):
            continue  # 后面紧跟的词两边都有、却不一样：说的是另一件事
        end = match.end() + (len(other) - match.end() - len(following)) + (len(str(after)) if same_right else 0)
        found = found or stripped(other, start - len(window), end)
    return found
