"""内容词和语言：句子和资料按同一种方式切成“词”，比较的就是这些词。

  · 中文按相邻两字（一个字的片段按单字），两个字都是虚词用字的二元组（“因为”“可以”）不算内容词；
  · 拉丁文按单词（小写，去掉复数的 s），the、of 这类不算内容词；“RAID 5”和“RAID5”是同一个词；
  · 纯数字、英文数词不算内容词（数字由 quantities 单独核对）。
这里的函数都读 reading.py 读出来的文字（Seen：全角已经换成半角、记号和看不见的字符已经去掉），自己不再换什么。
所有正则都不会在长串数字、字母上来回回溯：时间和长度成线性。
"""
import re
from dataclasses import dataclass

from sourced_answers.checker.reading import Seen
from sourced_answers.checker.text import CJK, count_chinese, is_chinese_char

# 一个词：一串汉字；大写缩写接数字（RAID 5、USB3，缩写要从头开始，免得在一长串大写字母上逐位回溯）；
# 一个拉丁单词（可以带数字和撇号）；数字紧跟字母（4K、2.5GbE，数字也要从头开始）
TOKEN = re.compile(rf"[{CJK}]+|(?<![A-Z])[A-Z]{{2,}}[ ]?[0-9]+[A-Za-z]*|[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)?"
                   r"|(?<![0-9])[0-9]+(?:\.[0-9]+)?[A-Za-z]+")
# 常见的虚词、连接词用字：两个字都在这里的二元组（如“因为”“可以”“这是”）不算内容词
FUNCTION_CHARS = set(
    "的了是在和也都而且因为所以可能会有这那些其次如例等及与或但并就被把对从到将还更很非常一个种"
    "我你他她它们要需应该能够已经通过进行主要之于以中此外另首先然后最后再者总即使虽若如果不没无么"
    "什怎样何时候当下上里内前后来去过着得地太最较比又才只便曾正啊吧呢吗呀哦则即且亦由给让使令向往"
    "按照据方面情况问题法说认觉看出表示显指提称为叫做作成般通常往经总是直定多少全所任整本身自己各每"
    "之间大约概几乎基重必值容易难用包括含诸类既却否然除只要论管尽可")
ENGLISH_STOPWORDS = set("""a an the and or but if then so of to in on at by for with from as is are was were be been
being it its this that these those there here he she they we you i me my our your their his her them us
do does did done have has had not no yes can could should would may might must will shall than too very
also just only into over under about after before between through during out up down again further once
all any both each few more most other some such own same what which who whom whose when where why how
because while until against above below off s t""".split())
ENGLISH_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                   "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
                   "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
                   "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                   "ninety": 90, "hundred": 100, "thousand": 1000, "twice": 2, "double": 2, "triple": 3}
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# 按字比较时的“字”：一个汉字、一个拉丁单词、一串数字，或别的一个文字字符（空白和标点不算）
UNIT = re.compile(rf"[{CJK}]|[a-z]+|[0-9]+|[^\W_]")
LANGUAGE_NAMES = {"zh": "中文", "en": "英文", "": "另一种语言"}

Token = tuple[str, int, int, bool]  # (词, 开始, 结束, 是不是内容词)


def plain_units(text: Seen) -> list[str]:
    """按字比较两段文字时的“字”：汉字一个字一个，拉丁文一个单词一个，数字一串一个（小写，空白和标点不算）。
    这样中文和英文的句子都能按同一种方式算片段的重合。"""
    return UNIT.findall(text.lower())


def tokens_with_spans(text: Seen) -> list[Token]:
    """内容词和它们在 text 里的位置：中文按相邻两字（一字的片段按单字），拉丁文按单词（小写）。"""
    found: list[Token] = []
    for match in TOKEN.finditer(text):
        word = match.group()
        start = match.start()
        if is_chinese_char(word[0]):
            if len(word) == 1:
                found.append((word, start, start + 1, word not in FUNCTION_CHARS))
            for i in range(len(word) - 1):
                pair = word[i:i + 2]
                content = not (pair[0] in FUNCTION_CHARS and pair[1] in FUNCTION_CHARS)
                found.append((pair, start + i, start + i + 2, content))
        else:
            token = latin_token(word)
            if token is not None:
                found.append((token, start, match.end(), token not in ENGLISH_STOPWORDS))
    return found


def latin_token(word: str) -> str | None:
    """一个拉丁字母的词 → 比较用的写法（小写、去掉复数的 s）；数词和数字一样单独核对，不算词（返回 None）。"""
    word = word.lower().replace("’", "'").replace(" ", "")
    if word in ENGLISH_NUMBERS or word == "one":
        return None
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word


def token_set(text: Seen) -> set[str]:
    """text 里出现的全部词（含虚词组成的），和 tokens_with_spans 给出的一样，只是不要位置（建资料索引时用，快一些）。"""
    found: set[str] = set()
    for word in TOKEN.findall(text):
        if is_chinese_char(word[0]):
            if len(word) == 1:
                found.add(word)
            else:
                found.update(map("".join, zip(word, word[1:], strict=False)))
            continue
        token = latin_token(word)
        if token is not None:
            found.add(token)
    return found


# “太短、不判支持分”按内容的字数算，不按词数：一个很长的“词”（5000 个 C、一段 400 字的乱码、`rm -rf /`）是内容，
# 照样核对；真正的引导语（“资料 [3] 提到”“According to the source”）没有内容，不判
MIN_CONTENT = 6
# 引导语用的词：说的是“资料里说”，不是一件事（算内容的字数时不算它们）
LEAD_IN_WORDS = re.compile(
    r"资料|来源|出处|文章|报道|网页|页面|原文|文中|上文|下文|上述|以下|如下|下面|上面|根据|依据|据|按照|提到|提及|指出|"
    r"显示|表明|所示|参见|详见|见|写道|介绍|认为|说法|称|说|(?<![A-Za-z])(?:the|a|an|this|that|these|source|sources|"
    r"article|page|document|reference|according|to|per|as|in|on|see|says?|said|states?|stated|notes?|noted|shows?|"
    r"shown|mentions?|mentioned|reports?|reported|explains?|describes?|following|below|above|cited)(?![A-Za-z])",
    re.IGNORECASE)
# 算字数时不算的：空白、标点（句号、逗号、引号、括号……）；代码里常见的 - / _ \ # @ & * % 这些算内容
NOT_CONTENT = re.compile(r"[^\w\-/\\#@&*%$+=<>|^~`]|_|`")


def content_characters(text: Seen) -> int:
    """句子里内容的字数：字母、数字、汉字和代码里的符号，不算空白、标点和引导语用的词（资料、提到、according to……）。"""
    return len(NOT_CONTENT.sub("", LEAD_IN_WORDS.sub("", text)))


def too_short(text: Seen) -> bool:
    """内容少于 MIN_CONTENT 个字的句子（引导语、“是的”）不判支持分。"""
    return content_characters(text) < MIN_CONTENT


def material(text: Seen) -> int:
    """句子有多少“字料”：中文二元组算 1，拉丁文单词算 2。太短的句子不判支持分。"""
    total = 0
    for match in TOKEN.finditer(text):
        word = match.group()
        total += len(word) - 1 if is_chinese_char(word[0]) else 2
    return total


@dataclass
class ClaimWords:
    """一个句子的内容词：按出现顺序（带位置）和去重后的。每个句子只算一次，和几条资料比都用它。"""
    content: list[Token]
    distinct: list[str]
    all_distinct: list[str]  # 含虚词组成的二元组（修正时看句子是不是差不多照着资料写的）


def claim_words(body: Seen) -> ClaimWords:
    tokens = tokens_with_spans(body)
    content = [t for t in tokens if t[3]]
    return ClaimWords(content, list(dict.fromkeys(t[0] for t in content)),
                      list(dict.fromkeys(t[0] for t in tokens)))


# ---------- 语言 ----------

def script_counts(text: Seen) -> tuple[int, int]:
    """text 里有几个汉字、几个拉丁单词。"""
    return count_chinese(text), len(LATIN_WORD.findall(text))


def language_of(text: Seen) -> str | None:
    """按内容判断句子是中文（zh）还是拉丁字母的语言（en）：汉字数和拉丁单词数比。夹着英文产品名的中文句子仍是中文；
    说不清（太短、两样差不多又都很少）时为 None。"""
    chinese, latin = script_counts(Seen(text[:4000]))
    if chinese >= 3 or (chinese and chinese >= latin):
        return "zh"
    if latin >= 2 and not chinese:
        return "en"
    return None


# 资料里有这么多汉字（或拉丁单词），就算它“有中文”（“有英文”）：双语网页、前面是几千字英文导航的中文网页
# 都能和这种语言的句子比较；英文网页导航里零星的几个汉字不算
SOME_TEXT = 20


def source_languages(text: Seen) -> tuple[str | None, frozenset[str]]:
    """一条资料的主要语言（给人看：汉字不太少就是中文，否则有拉丁单词时是英文），以及它里面有哪些语言的正文。
    数的是整条资料（线性时间），不只是开头。"""
    chinese, latin = script_counts(text)
    # 中文的技术网页常夹着大段命令和代码：汉字只要有拉丁单词的五分之一就算中文页面
    main = "zh" if chinese and chinese * 5 >= latin else "en" if latin >= 3 else None
    present = {language for language, count in (("zh", chinese), ("en", latin)) if count >= SOME_TEXT}
    return main, frozenset(present | ({main} if main else set()))
