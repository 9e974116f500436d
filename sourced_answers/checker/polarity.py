"""否定：哪些字是否定，一处否定是不是在断言。slots.py 拿它比较同一处的肯定和否定（说反了）。

  · 否定的写法：不、没、没有、无、无法、未、未曾、不曾、非、并非、毋、别、勿……（繁体、兼容汉字、全角在读的时候
    已经统一，reading.py），英文的 not、no、never、n't、cannot、without；
  · 含否定用字却不是否定的词：“不仅”“不过”“非常”“无线”“未来”“不同”……，和说程度的“不够”“不太”“不大”
    （减弱，不是说反）（NOT_NEGATION）；
  · 不是断言的地方：问句（问号、“吗”“呢”“是否”“能不能”，反问“为什么不”）、选择（“或者非全时四驱”“还是”）、假设和
    让步（“如果”“即使”）、转述别人的说法（“有人认为”“据说”）；
  · 有否定意味、却不是正好相反的词（“很难”“避免”“缺乏”“减少”）；说的是以前或者“还没有”（“之前没有”“尚无”）。
这些词表是在 CiteCheck dev 的拟合部分和 OCNLI 写规则的那一半上看出来的，没有用验证部分、OCNLI 只报告的那一半。
只用标准库。
"""
import re
from bisect import bisect_left
from functools import lru_cache

# 含否定用字、却不是否定的词（它们里面的“不”“无”“非”“未”不算）
NOT_NEGATION = re.compile(
    r"不仅|不但|不过|不管|不论|无论|非常|无线|未来|不同|不少|不断|不久|无数|无限|不错|不得不|不妨|不禁|未必|"
    r"非但|无非|除非|是非|毫无疑问|无疑|无人|不锈|不动产|无损|无缝|无关|不得了|莫非|南非|非洲|无锡|未知|不如|不止|"
    r"不只|不光|非得|非要|无所谓|不然|要不|不由|未尝|无偿|不利|不良|不安|不满|不便|不平|不幸|不当|不妥|"
    r"不对称|是不是|能不能|会不会|要不要|有没有|可不可以|好不好|对不对|行不行|用不用|需不需要|该不该|算不算|"
    r"别人|别的|别处|别名|别墅|特别|区别|分别|级别|类别|识别|差别|性别|个别|告别|辨别|派别|鉴别|判别|离别|送别|道别|话别|诀别|惜别|久别|勿忘|无形|无意|不时|不已|非法|非凡|并无|不外乎|无与伦比|不可或缺|不可思议|不言而喻|"
    # 说程度的（“不够均等”“不太快”“影响不大”）：减弱，不是说反
    r"不够|不太|不大(?!于)|不很|不怎么|不算"
)
# 问句：问号结尾的句子、“吗”“呢”结尾的分句（这两种见 ends_with），“是否”这类问法
QUESTION_WORDS = re.compile(r"是否|能否|可否|是不是|能不能|会不会|要不要|有没有|可不可以|需不需要|该不该")
# 假设、让步：“即使孩子不和异性交往”“如果不开启”说的不是事实
HYPOTHETICAL = re.compile(r"即使|即便|如果|假如|假设|要是|倘若|万一|哪怕|就算|若(?!干)")
SENTENCE_BREAK = re.compile(r"[。！？!?；;\n]")
# 选择：否定紧跟在“或、或者、还是、抑或”后面（“全时四驱或者非全时四驱”“要还是不要”）
ALTERNATIVE = re.compile(r"(?:或者|或是|还是|抑或|或)[ \t]*$")
CLAUSE_BREAK = re.compile(r"[，。,;；：:！？!?\n]")

# 否定（中文按最长的写法先认）
CHINESE_NEGATION = re.compile(
    r"并非|绝非|并不|并未|并没有|并没|从不|从未|从没有|从没|从来不|从来没有|决不|绝不|不再|没有|无法|无需|无须|毫无|"
    r"不能|不会|不可|不是|不要|不用|不必|不得|不曾|未曾|未能|尚未|还未|还没有|还没|没能|不|没|未|无|非|毋|别|勿")
ENGLISH_NEGATION = re.compile(r"(?<![A-Za-z])(?:not|no|never|cannot|none|nor|without|neither|nobody|nothing|nowhere)"
                              r"(?![A-Za-z])|[A-Za-z]+n['’]t(?![A-Za-z])", re.IGNORECASE)
# 另一边有这些委婉的、有否定意味的词时，不算说反（“很难握紧”对“不能握紧”、“缺乏资金”对“没有资金”）
NEGATIVE_MEANING = re.compile(
    r"很难|难以|不易|不大|不太|很少|较少|极少|鲜有|几乎|避免|防止|禁止|杜绝|拒绝|切勿|缺乏|缺少|欠缺|失去|丧失|停止|"
    r"取消|放弃|否认|反对|忽视|忽略|拒|免|难|少|未必|不一定|可能|也许|或许|减少|降低|不够|不很|不怎么|不算|"
    r"(?<![A-Za-z])(?:hardly|rarely|seldom|barely|scarcely|avoid|prevent|lack|lacks|lacking|refuse|refused|deny|denied|"
    r"fail|fails|failed|stop|stopped|unable|few|little|may|might)(?![A-Za-z])", re.IGNORECASE)
# 转述别人的说法：“有人认为……不”“据说”“误以为”
REPORTED = re.compile(r"有人(?:说|认为|称|觉得|以为|担心)|据说|据传|传言|传闻|谣传|谣言|误以为|误认为|以为|"
                      r"为什么不|为何不|何不|何尝不|难道不|岂不|"
                      r"(?<![A-Za-z])(?:some say|some people|it is said|rumou?r|myth|misconception|claims? that)"
                      r"(?![A-Za-z])",
                      re.IGNORECASE)
# 说的是以前的情况、或者“还没有”：和资料说的现在（“制定了”“建立”）不是相反的意思
EARLIER = re.compile(r"之前|以前|过去|原来|原先|此前|先前|当时|曾经|从前|早先|起初|最初|尚|还没|还未|仍未|仍然没"
                     r"|(?<![A-Za-z])(?:before|previously|formerly|once|used to|not yet|still not)(?![A-Za-z])",
                     re.IGNORECASE)
# 选择问句：“支持热插拔还是不支持热插拔”“whether or not”
ALTERNATIVE_CLAUSE = re.compile(r"还是|抑或|(?<![A-Za-z])(?:whether|or not)(?![A-Za-z])", re.IGNORECASE)
# 否定词和它否定的词之间可以有的字（“不能够支持”“没有再出现”“不会被删除”）
BETWEEN = re.compile(r"需要|必要|应该|应当|愿意|[能会可够是再太都也得要该应被将就还很需必用敢肯愿][以能够]?"
                     r"|(?:be|been|being|able|to|need|needs)(?![A-Za-z])", re.IGNORECASE)
# 否定词两边可以有的引号、括号（“这款 NAS “不”支持”）
QUOTES = "“”\"'‘’「」『』（）()【】"

Span = tuple[int, int]


def asserted(text: str, position: int, choice: bool = False) -> bool:
    """position 所在的地方是在断言：不在问句里、不在假设或让步的分句里，也不是选择里的一项（“或者非全时四驱”；
    choice 为 True 时选择里的一项也算：“用 VPN 或 ZeroTier”推荐的就是 ZeroTier）。"""
    if not choice and ALTERNATIVE.search(text, max(0, position - 3), position):
        return False
    sentence_start, sentence_end = sentence_of(text, position)
    if ends_with(text, sentence_start, sentence_end, "？?"):
        return False
    left, right = clause_start(text, position), clause_end(text, position)
    if found(HYPOTHETICAL, text, sentence_start, position) or found(HYPOTHETICAL, text, left, right):
        return False  # 假设、让步的分句，和它后面说的结果（“如果不开启，系统不会备份”）
    return not (found(QUESTION_WORDS, text, left, right) or ends_with(text, left, right, "吗呢"))


# ---------- 分句、句子的边界和一段里有没有某个词：每一处都不随整段文字变长 ----------
# 一句话可以有 1 MB 长、没有一个标点：每次都从头找标点、在整句里找词，核对就成了平方级。标点的位置和长句里
# 每个词出现的位置每段文字只找一遍，之后每次都是二分查找。

# 短于这么多个字的一段直接用正则找（和以前一字不差）；更长的用一遍找好的位置
SHORT_SPAN = 2000


@lru_cache(maxsize=64)
def positions(pattern: re.Pattern[str], text: str) -> tuple[list[int], list[int]]:
    """pattern 在 text 里每一处（不重叠、从左到右）的开始和结束。"""
    starts, ends = [], []
    for match in pattern.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def found(pattern: re.Pattern[str], text: str, start: int, end: int) -> bool:
    """text 的 [start, end) 里有 pattern 的一处。"""
    if end - start <= SHORT_SPAN:
        return pattern.search(text, start, end) is not None
    starts, ends = positions(pattern, text)
    index = bisect_left(starts, start)
    return index < len(starts) and ends[index] <= end


def ends_with(text: str, start: int, end: int, marks: str) -> bool:
    """[start, end) 去掉末尾的一个换行、空白、引号和括号之后，最后一个字是 marks 里的一个（问号、“吗”“呢”）。"""
    position = end
    if position > start and text[position - 1] == "\n":
        position -= 1
    while position > start and text[position - 1] in " \t\"”’）)":
        position -= 1
    return position > start and text[position - 1] in marks


def sentence_of(text: str, position: int) -> Span:
    """position 所在的句子（连同结尾的句号、问号）。"""
    starts, _ = positions(SENTENCE_BREAK, text)
    index = bisect_left(starts, position)
    return (starts[index - 1] + 1 if index else 0), (starts[index] + 1 if index < len(starts) else len(text))


def clause_end(text: str, position: int) -> int:
    """从 position 起，这个分句到哪里结束（下一个逗号、句号这类标点的位置，没有时是末尾）。"""
    starts, _ = positions(CLAUSE_BREAK, text)
    index = bisect_left(starts, position)
    return starts[index] if index < len(starts) else len(text)


def clause_around(text: str, start: int, end: int) -> str:
    """[start, end) 所在的那个分句（前后到逗号、句号这类标点为止）。"""
    return text[clause_start(text, start):clause_end(text, end)]


def negations(text: str, span: Span) -> list[tuple[int, int]]:
    """text 里 span 这一段中的否定词的位置（含否定用字却不是否定的词不算）。"""
    start, end = span
    found: list[tuple[int, int]] = []
    ignored = [m.span() for m in NOT_NEGATION.finditer(text, max(0, start - 3), min(len(text), end + 3))]
    for pattern in (CHINESE_NEGATION, ENGLISH_NEGATION):
        for match in pattern.finditer(text, start, end):
            if not any(low <= match.start() < high for low, high in ignored):
                found.append(match.span())
    return found


def stated(text: str, position: int, end: int | None = None, choice: bool = False) -> bool:
    """position 这里（到 end 为止的这几个字）是在断言：不是问句、选择（choice 见 asserted）、假设、让步，也不是
    转述别人的说法或反问（“为什么不试试”）。"""
    if not asserted(text, position, choice):
        return False
    if not choice and found(ALTERNATIVE_CLAUSE, text, *clause_of(text, position)):
        return False
    sentence_start = sentence_of(text, position)[0]
    return not found(REPORTED, text, sentence_start, max(position, end or position))


def negates_the_piece(text: str, span: Span, negation: tuple[int, int]) -> bool:
    """这个否定词后面到 span 的末尾（也就是对上的那一段的开头）只有“能”“会”“被”这类字：否定的正是对上的那一段。"""
    rest = text[negation[1]:span[1]].strip().lstrip(QUOTES).strip()
    while rest:
        between = BETWEEN.match(rest)
        if not between:
            return False
        rest = rest[between.end():].strip()
    return True


def clause_of(text: str, position: int) -> Span:
    """position 所在的分句的位置。"""
    return clause_start(text, position), clause_end(text, position)


def clause_start(text: str, position: int) -> int:
    """position 所在的分句从哪里开始（前一个逗号、句号这类标点之后）。"""
    starts, _ = positions(CLAUSE_BREAK, text)
    index = bisect_left(starts, position)
    return starts[index - 1] + 1 if index else 0
