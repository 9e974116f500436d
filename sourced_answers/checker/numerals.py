"""数字的各种写法读成数：中文数字（三千、两万五千、二〇一五、贰仟玖佰玖拾玖）、序数（第七条）、日期（2015年8月23日、
8月23日、2015-08-23）、年份（2023年、二〇一五年、'63、2022-23 赛季）、分数（百分之五十、三分之一）、罗马数字
（至少IV块盘、资料里的 type II）、俩和仨，以及句首的编号（“1 选两盘位”“(3) 选”里的 1、3 不是数量）。

读到的数量放进 found（带着位置），读过的那几个字换成同样多的空格，其余的字的位置不变（quantities.py 接着读剩下的）。
"""
import re

from sourced_answers.checker.text import CJK, is_chinese_char

Quantity = tuple[float, str | None]  # (数值, 单位)
Span = tuple[int, int]
Found = list[tuple[Quantity, Span]]  # 数量和它在文字里的位置

CHINESE_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "两": 2, "三": 3, "叁": 3, "四": 4, "肆": 4,
                  "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
CHINESE_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
CHINESE_BIG = {"万": 10_000, "亿": 100_000_000}
# 中文数字后面跟着这些量词/单位时才算数量（“一些”“一般”“十分”“千万别”都不是数）
MEASURE_WORDS = ("个块盘位年月日天周次倍种份人名元角分秒岁米里克斤吨度层条项台张家只本部类级代期届件首座所"
                 "间辆架艘口片颗粒杯瓶碗场节章集季轮号成折核路道码毫升寸尺%％小平厘公")
# 紧跟在阿拉伯数字后面的“万”“亿”属于那个数（“42万”），不单独读
CHINESE_NUMERAL = re.compile(r"(?<![0-9])[零〇一壹二贰两三叁四肆五伍六陆七柒八捌九玖十拾百佰千仟万亿]+")
# 数字后面的“百”“千”“万”“亿”是数的一部分：“42万人”= 420000 人，“1.75万亿”= 1.75e12，“3千元”= 3000 元
MAGNITUDES = {"百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
# “俩”是两个、“仨”是三个（“我们俩”“他们仨”）
COLLECTIVE = re.compile("[俩仨]")
COLLECTIVE_VALUES = {"俩": 2, "仨": 3}
# 用拉丁字母写的罗马数字，后面紧跟汉字量词时是数（“至少IV块盘”）
ROMAN_HINT = re.compile(r"(?<![A-Za-z])[IVXLCDM]+(?![A-Za-z])")
ROMAN_LETTERS = re.compile(r"(?<![A-Za-z])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})(?![A-Za-z])")
ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
# 资料里用拉丁字母写的罗马数字（只认 I、V、X 组成、两个字母以上的：type II、World War II）：回答写 type 2 也对得上。
# 回答里的不读（“IV drip”“VI editor”不是数）
SOURCE_ROMAN = re.compile(r"(?<![A-Za-z])(?=[IVX]{2})(X{0,3})(IX|IV|V?I{0,3})(?![A-Za-z])")
# 句首的编号（“1 选两盘位”“(1) 选两盘位”，“① 选两盘位”读成的“1 选两盘位”）：带着编号的记号、或者后面不是量词时，
# 是编号，不是数量（“3 块盘就够了”里的 3 是数量）
LEADING_NUMBER = re.compile(r"^[ \t]*([（(])?([0-9]{1,2})(?![0-9])((?(1)[)）]|(?:[)）、:：]|\.(?![0-9]))))?[ \t]*")
# 年份（2023年、二〇一五年、2021-05-10 里的 2021）是单位为“年份”的数量。回答常给资料里的事补上年份，标注者多半仍算
# “有依据”（CiteCheck 拟合部分上只缺年份的句子，支持与不支持差不多各半），所以资料里没有的年份不算错，
# 只在同一处说了另一年时算（number_rule.py）
YEAR = re.compile(r"(?<![0-9])(?:19|20)[0-9]{2}(?=[ \t]*年|[-/.][0-9])"
                  r"|(?<![零〇一二三四五六七八九])[零〇一二三四五六七八九]{4}(?=年)")
YEAR_UNIT = "年份"
# 年份的另一些写法：'63（当作 1963）、2022-23 这样的赛季（两个年份）
SHORT_YEAR = re.compile(r"(?<![A-Za-z0-9])['’]([0-9]{2})(?![0-9])")
SEASON = re.compile(r"(?<![0-9])((?:19|20)[0-9]{2})[-–/]([0-9]{2})(?![0-9])")
# 序数：“第七条”=“第 7 条”，读成 (7, "第条")；资料里有同一个序数（量词可以不同：“第二位”=“第二名”）或者同一个数
# 就对得上。“第 5 步”“第 3 点”“第二部分”“Step 5”“步骤 3”是讲解的步骤，不是事实，不算数量
ORDINAL = re.compile(rf"第[ \t]*([0-9]+|[零〇一二两三四五六七八九十百千]+)[ \t]*([{CJK}])")
PROCEDURAL_ORDINALS = ("步", "点", "部分", "阶段")
STEP = re.compile(r"(?<![A-Za-z])[Ss]tep[ \t]*[0-9]+|步骤[ \t]*[0-9]+")
# 日期作为一个整体：“2015年8月23日”“2015-08-23”“8月23日”“二〇一五年八月二十三日”都是 (823, "日期")，
# 日期里的年份另读成一个年份
_CHINESE_DIGIT = "零〇一二两三四五六七八九十"
_DAY = rf"(?:[0-9]{{1,2}}|[{_CHINESE_DIGIT}]{{1,3}})"
# 日期后面接着说的另一天：“10月15日至16日”“10月15、16日”里的 16 日也是 10 月的
_AND = r"[ \t]*(?:至|到|和|及|与|、|-|–|~|～)[ \t]*"
DATE_CONTINUED = re.compile(rf"{_AND}({_DAY})[ \t]*[日号]")
DATE = re.compile(rf"(?:(?<![0-9])(?P<year>[0-9]{{4}})[ \t]*年[ \t]*"
                  rf"|(?P<chinese_year>[{_CHINESE_DIGIT}]{{4}})年[ \t]*)?"
                  rf"(?<![0-9{_CHINESE_DIGIT}])([0-9]{{1,2}}|[{_CHINESE_DIGIT}]{{1,3}})[ \t]*月[ \t]*"
                  rf"({_DAY})(?:[ \t]*[日号]|(?={_AND}{_DAY}[ \t]*[日号]))"
                  r"|(?<![0-9])(?P<iso_year>[0-9]{4})[-/.]([0-9]{1,2})[-/.]([0-9]{1,2})(?![0-9])")
ISO_DATE = re.compile(r"[0-9]{4}[-/.][0-9]")
DATE_UNIT = "日期"
# 只说了几日的（“16日”）：资料里哪一个日期是这一天就对得上
DAY = "日"
# 分数：“百分之五十”“千分之三”“三分之一”“百分之 2.5”
FRACTION_BASES = {"百": 100, "千": 1000, "万": 10_000}
FRACTION = re.compile(r"([百千万]|[0-9]+|[零〇一二两三四五六七八九十]+)分之[ \t]*"
                      r"([0-9]+(?:\.[0-9]+)?|[零〇一二两三四五六七八九十百]+)")


def chinese_value(numeral: str) -> int | None:
    """“三千” → 3000，“十二” → 12，“两万五千” → 25000。认不出（“三四块”这类约数、只有“万”“亿”、长得不像一个数）时
    返回 None。"""
    if all(char in CHINESE_BIG for char in numeral) or len(numeral) > 18:
        return None
    total = 0
    section = 0
    digit: int | None = None
    for char in numeral:
        if char in CHINESE_DIGITS:
            if digit is not None:
                return None  # “三四块”这类约数
            digit = CHINESE_DIGITS[char]
        elif char in CHINESE_UNITS:
            section += (1 if digit is None else digit) * CHINESE_UNITS[char]
            digit = None
        elif char in CHINESE_BIG:
            total = (total + section + (digit or 0)) * CHINESE_BIG[char]
            section = 0
            digit = None
    return total + section + (digit or 0)

def numeral_value(numeral: str) -> int | None:
    """阿拉伯数字或中文数字的整数值（“二十二”“22”“二〇一五”）；认不出时为 None。"""
    if len(numeral) > 18:
        return None  # 这么长的只会是乱码，不是一个数（也免得 int() 超过位数上限）
    if numeral.isdigit():
        return int(numeral)
    if len(numeral) > 1 and all(char in "零〇一二三四五六七八九" for char in numeral):
        return int("".join(str(CHINESE_DIGITS[char]) for char in numeral))  # “二〇一五”逐字读
    return chinese_value(numeral)

def blank(match: re.Match[str]) -> str:
    """一段换成同样多的空格：去掉它，其余的字的位置不变（数量要记着自己在文字里的位置）。"""
    return " " * len(match.group())

def read_ordinals(text: str, found: Found) -> str:
    """序数读成 (值, "第"+量词) 放进 found；讲解步骤的序数去掉。返回去掉序数之后的文字（长度不变）。"""
    if "第" not in text:
        return STEP.sub(blank, text) if "tep" in text or "步骤" in text else text

    def replace(match: re.Match[str]) -> str:
        unit = match.group(2)
        procedural = text.startswith(PROCEDURAL_ORDINALS, match.start(2))
        value = numeral_value(match.group(1))
        if not procedural and value is not None:
            found.append(((float(value), "第" + unit), match.span()))
        return " " * len(match.group())
    return STEP.sub(blank, ORDINAL.sub(replace, text))

def read_dates(text: str, found: Found) -> str:
    """日期读成 (月 × 100 + 日, "日期") 放进 found，日期里的年份读成 (年, "年份")。
    返回去掉日期之后的文字（长度不变）。"""
    if "月" not in text and not ISO_DATE.search(text):
        return text

    def replace(match: re.Match[str]) -> str:
        month_text = match.group(3) or match.group(6)
        day_text = match.group(4) or match.group(7)
        month, day = numeral_value(month_text), numeral_value(day_text)
        if month is None or day is None or not (1 <= month <= 12 and 1 <= day <= 31):
            return match.group()
        found.append(((float(month * 100 + day), DATE_UNIT), match.span()))
        for name in ("year", "chinese_year", "iso_year"):
            year = numeral_value(match.group(name)) if match.group(name) else None
            if year is not None:
                found.append(((float(year), YEAR_UNIT), match.span(name)))
        return " " * len(match.group())

    def replace_continued(match: re.Match[str]) -> str:
        """日期和它后面接着说的另一天（“至16日”）：同一个月的那一天也是一个日期（那几个字留着，读成“16日”，
        只说几日的句子也对得上它）。"""
        replaced = replace(match)
        month = numeral_value(match.group(3)) if match.group(3) and replaced != match.group() else None
        end = match.end()
        while month is not None and (more := DATE_CONTINUED.match(text, end)):
            day = numeral_value(more.group(1))
            if day is not None and 1 <= day <= 31:
                found.append(((float(month * 100 + day), DATE_UNIT), more.span(1)))
            end = more.end()
        return replaced
    return DATE.sub(replace_continued, text)

def read_years(text: str, found: Found) -> str:
    """年份（“2023年”“二〇一五年”“2021-05”里的 2021、“'63”、赛季“2022-23”）读成 (年, "年份")。
    返回去掉年份之后的文字（长度不变）。"""
    def replace(match: re.Match[str]) -> str:
        value = numeral_value(match.group())
        if value is not None:
            found.append(((float(value), YEAR_UNIT), match.span()))
        return " " * len(match.group())

    def season(match: re.Match[str]) -> str:
        first = int(match.group(1))
        second = first // 100 * 100 + int(match.group(2))
        if second <= first:
            return match.group()  # 2022-05 这样的是年月，由日期和年份的规则读
        found.append(((float(first), YEAR_UNIT), match.span(1)))
        found.append(((float(second), YEAR_UNIT), match.span(2)))
        return " " * len(match.group())

    def short(match: re.Match[str]) -> str:
        found.append(((float(1900 + int(match.group(1))), YEAR_UNIT), match.span()))
        return " " * len(match.group())
    if "-" in text or "–" in text or "/" in text:
        text = SEASON.sub(season, text)
    if "'" in text or "’" in text:
        text = SHORT_YEAR.sub(short, text)
    return YEAR.sub(replace, text)

def exact(value: float) -> float:
    """乘上“万”“亿”之后的数取 12 位有效数字：1.1亿（1.1 × 10⁸ = 110000000.00000001）= 11000万。"""
    return float(f"{value:.12g}")

def roman_value(numeral: str) -> int:
    values = [ROMAN_VALUES[char] for char in numeral]
    return sum(-value if index + 1 < len(values) and value < values[index + 1] else value
               for index, value in enumerate(values))

def leading_enumerator(text: str) -> str:
    """句首的编号（后面不是量词）换成空格：“1 选两盘位”里的 1 不是数量，“3 块盘就够了”里的 3 是。"""
    match = LEADING_NUMBER.match(text)
    if not match:
        return text
    after = text[match.end():match.end() + 1]
    marked = bool(match.group(3))  # “1.”“2:”“(3)”这样带着编号的记号
    if not after or not marked and (after in MEASURE_WORDS or after in MAGNITUDES or not is_chinese_char(after)):
        return text  # “3 块盘”“3千元”“3%”“3 TB”：数量
    return " " * match.end() + text[match.end():]

def read_fractions(text: str, found: Found) -> str:
    """百分之几、千分之几、几分之几读成一个数（百分之五十 = 50%，千分之三 = 0.3%，三分之一 = 1/3）。
    返回去掉它们之后的文字（长度不变）。"""
    if "分之" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        denominator = FRACTION_BASES.get(match.group(1)) or numeral_value(match.group(1))
        written = match.group(2)
        numerator = float(written) if written[0].isdigit() else numeral_value(written)
        if not denominator or numerator is None:
            return match.group()
        if match.group(1) in FRACTION_BASES:
            found.append(((exact(numerator * 100 / denominator), "%"), match.span()))
        else:
            found.append(((exact(numerator / denominator), None), match.span()))
        return " " * len(match.group())
    return FRACTION.sub(replace, text)
