"""数量：句子和资料里的数字按同一种方式读出来，比较的是值和单位，不是写法。

三块 = 3 块，三千元 = 3000 元，27,400 = 27400、2 999 = 2999、全角 ９０％ = 90%、𝟑 = ٣ = 3（这些写法由 reading.py
在读的时候统一，这里读的是 Seen）；“RAID5”“i5”这样的名称、“1)”“2、”这样的列表序号、
“第 5 步”、年份都不算数量。一个单位写一次、管一串数（“3/4/5 盘位”“5020x1945x1775mm”）。
"""
import re
from collections.abc import Iterable, Set

from sourced_answers.checker.reading import Seen
from sourced_answers.checker.text import CJK, is_chinese_char
from sourced_answers.checker.tokens import ENGLISH_NUMBERS

CHINESE_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "两": 2, "三": 3, "叁": 3, "四": 4,
                  "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CHINESE_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
CHINESE_BIG = {"万": 10_000, "亿": 100_000_000}
# 中文数字后面跟着这些量词/单位时才算数量（“一些”“一般”“十分”“千万别”都不是数）
MEASURE_WORDS = ("个块盘位年月日天周次倍种份人名元角分秒岁米里克斤吨度层条项台张家只本部类级代期届件首座所"
                 "间辆架艘口片颗粒杯瓶碗场节章集季轮号成折核路道码毫升寸尺%％小平厘公")
# 计数用的量词彼此常换着用（“10 个小兽”和“10 只小兽”），比较时当作同一个单位
COUNTERS = set("个只名位家头件台张条项本部座所间辆架艘颗粒杯瓶碗首")
UNIT_SYNONYMS = {"cm": "厘", "mm": "毫", "kg": "公", "km": "公", "％": "%"}
# 前面是字母的数字是名称的一部分（RAID5、i5），只有“5020x1945”这种尺寸里 x 后面的数字除外
ARABIC = re.compile(r"(?:(?<![A-Za-z0-9.])|(?<=[0-9][xX]))([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(\.[0-9]+)?(?![0-9])")
# 紧跟在阿拉伯数字后面的“万”“亿”属于那个数（“42万”），不单独读
CHINESE_NUMERAL = re.compile(r"(?<![0-9])[零〇一壹二贰两三叁四五六七八九十拾百佰千仟万亿]+")
# RAID 5、USB3：名称，不是数量（缩写要从头开始，免得在一长串大写字母上逐位回溯）
ACRONYM_NUMBER = re.compile(r"(?<![A-Z])[A-Z]{2,} ?[0-9]+")
ENUMERATOR = re.compile(r"(?:^|(?<=[\s:：;；,，。]))[0-9]{1,2}(?:[)）、]|\.(?=\s))")
# 年份（2023年、2021-05-10 里的 2021）：回答常给资料里的事补上年份，标注者多半仍算“有依据”，
# 在 CiteCheck 上逐条看过，只因年份对不上的句子里支持与不支持各占一半，所以不拿年份判错
YEAR = re.compile(r"(?<![0-9])(?:19|20)[0-9]{2}(?=年|[-/.][0-9])")
UNIT_AFTER = re.compile(rf"[ \t]?([A-Za-z]+|[%％]|[{CJK}])")
GLUED_NAME = re.compile(r"(?<=[a-z])[A-Z]+$")
# 一串数字共用后面的单位：“3/4/5 盘位”“3-5 块”；尺寸“5020x1945x1775mm”要三个数以上（“2x8GB”是两条 8GB）
CHAIN = re.compile(r"[ \t]*[/／~～–-][ \t]*")
DIMENSION = re.compile(r"[ \t]*[xX×][ \t]*")
JOINERS = set(" \t/／~～–-xX×")  # CHAIN、DIMENSION 能开头的字符
# 序数：“第七条”=“第 7 条”，读成 (7, "第条")；资料里有同一个序数（量词可以不同：“第二位”=“第二名”）或者同一个数
# 就对得上。序数是编号、不是数量，不拿来和最接近的一句里别的序数比（“第三季第二集”对“看完第三集”不是矛盾）。
# “第 5 步”“第 3 点”“第二部分”“Step 5”“步骤 3”是讲解的步骤，不是事实，不算数量
ORDINAL = re.compile(rf"第[ \t]*([0-9]+|[零〇一二两三四五六七八九十百千]+)[ \t]*([{CJK}])")
PROCEDURAL_ORDINALS = ("步", "点", "部分", "阶段")
STEP = re.compile(r"(?<![A-Za-z])[Ss]tep[ \t]*[0-9]+|步骤[ \t]*[0-9]+")
# 日期作为一个整体：“2015年8月23日”“2015-08-23”“8月23日”“二〇一五年八月二十三日”都是 (823, "日期")。
# 年份不比（回答常给资料里的事补上年份，见 YEAR），月和日一起比
_CHINESE_DIGIT = "零〇一二两三四五六七八九十"
_DAY = rf"(?:[0-9]{{1,2}}|[{_CHINESE_DIGIT}]{{1,3}})"
# 日期后面接着说的另一天：“10月15日至16日”“10月15、16日”里的 16 日也是 10 月的
_AND = r"[ \t]*(?:至|到|和|及|与|、|-|–|~|～)[ \t]*"
DATE_CONTINUED = re.compile(rf"{_AND}({_DAY})[ \t]*[日号]")
DATE = re.compile(rf"(?:(?<![0-9])[0-9]{{4}}[ \t]*年[ \t]*|[{_CHINESE_DIGIT}]{{4}}年[ \t]*)?"
                  rf"(?<![0-9{_CHINESE_DIGIT}])([0-9]{{1,2}}|[{_CHINESE_DIGIT}]{{1,3}})[ \t]*月[ \t]*"
                  rf"({_DAY})(?:[ \t]*[日号]|(?={_AND}{_DAY}[ \t]*[日号]))"
                  r"|(?<![0-9])[0-9]{4}[-/.]([0-9]{1,2})[-/.]([0-9]{1,2})(?![0-9])")
ISO_DATE = re.compile(r"[0-9]{4}[-/.][0-9]")
DATE_UNIT = "日期"
# 只说了几日的（“16日”）：资料里哪一个日期是这一天就对得上
DAY = "日"
MAX_DIGITS = 30
# 数字后面的“万”“亿”是数的一部分：“42万人”= 420000 人，“1.75万亿”= 1.75e12
MAGNITUDES = {"万": 10_000, "亿": 100_000_000}
# 总数：“共有 90 个议席”“一共三块盘”“total of 12”。最接近的一句常常只说了其中一部分（“其中 30 个议席……”）
TOTAL = re.compile(r"(?:总共|一共|合计|总计|共计|总数[为是]?|共有|共"
                   r"|(?<![A-Za-z])(?:in total|a total of|total of))[ \t]*", re.IGNORECASE)
TOTAL_REACH = 12
# 举例用的数：“例如 100 元的商品……”说的是规则，不是事实，不拿来比
EXAMPLE = re.compile(r"(?:例如|比如|譬如|诸如|举例来说|举个例子|举例|打个比方|比方说|假如|假设|如果|假若|倘若|要是"
                     r"|以[^。；;，,！？!?\n]{1,20}为例|e\.g\.|for example|for instance|suppose|if you)"
                     r"[^。；;！？!?\n]*", re.IGNORECASE)
# 四个字母以上、却是计量单位的缩写
MEASURE_UNITS = {"mbps", "gbps", "kbps", "iops", "kwh", "mhz", "ghz", "khz", "rpm", "inch", "byte", "bytes"}
# 不当作复数去掉 s 的单位
PLURAL_KEEP = {"mbps", "gbps", "kbps", "fps", "ips", "bps", "iops", "ms", "ns", "us", "hdds", "ssds"}
ENGLISH_NUMBER_WORD = re.compile(r"(?<![A-Za-z])(" + "|".join(ENGLISH_NUMBERS) + r")(?![A-Za-z])", re.IGNORECASE)
DIGIT = re.compile(r"[0-9]")
Quantity = tuple[float, str | None]  # (数值, 单位)


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


def unit_at(text: str, position: int) -> str | None:
    """数字后面的单位：一个拉丁字母的词（小写、去掉复数的 s）、%、或一个汉字量词；没有时为 None。"""
    match = UNIT_AFTER.match(text, position)
    if not match or len(match.group(1)) > 12:
        return None
    unit = match.group(1)
    if text[match.end():match.end() + 1].isdigit():
        if unit in ("x", "X"):
            return None  # “1920x1080”“2x8GB”里的 x 是乘号
        unit = GLUED_NAME.sub("", unit) or unit  # “1.8GHzA55”：A55 是型号，单位是 GHz
    return normal_unit(unit.lower())


def normal_unit(unit: str) -> str | None:
    if is_chinese_char(unit[0]):
        if unit not in MEASURE_WORDS:
            return None  # “3-0的比分”里的“的”不是单位
        return "个" if unit in COUNTERS else unit
    if len(unit) > 3 and unit.endswith("s") and not unit.endswith("ss") and unit not in PLURAL_KEEP:
        unit = unit[:-1]  # drives → drive
    return UNIT_SYNONYMS.get(unit, unit)


def numeral_value(numeral: str) -> int | None:
    """阿拉伯数字或中文数字的整数值（“二十二”“22”“二〇一五”）；认不出时为 None。"""
    if len(numeral) > 18:
        return None  # 这么长的只会是乱码，不是一个数（也免得 int() 超过位数上限）
    if numeral.isdigit():
        return int(numeral)
    if len(numeral) > 1 and all(char in "零〇一二三四五六七八九" for char in numeral):
        return int("".join(str(CHINESE_DIGITS[char]) for char in numeral))  # “二〇一五”逐字读
    return chinese_value(numeral)


def read_ordinals(text: str, found: set[Quantity]) -> str:
    """序数读成 (值, "第"+量词) 放进 found；讲解步骤的序数去掉。返回去掉序数之后的文字（长度不变）。"""
    if "第" not in text:
        return STEP.sub(lambda m: " " * len(m.group()), text) if "tep" in text or "步骤" in text else text

    def replace(match: re.Match[str]) -> str:
        unit = match.group(2)
        procedural = text.startswith(PROCEDURAL_ORDINALS, match.start(2))
        value = numeral_value(match.group(1))
        if not procedural and value is not None:
            found.add((float(value), "第" + unit))
        return " " * len(match.group())
    return STEP.sub(lambda m: " " * len(m.group()), ORDINAL.sub(replace, text))


def read_dates(text: str, found: set[Quantity]) -> str:
    """日期读成 (月 × 100 + 日, "日期") 放进 found（年份不比）。返回去掉日期之后的文字（长度不变）。"""
    if "月" not in text and not ISO_DATE.search(text):
        return text

    def replace(match: re.Match[str]) -> str:
        month_text = match.group(1) or match.group(3)
        day_text = match.group(2) or match.group(4)
        month, day = numeral_value(month_text), numeral_value(day_text)
        if month is None or day is None or not (1 <= month <= 12 and 1 <= day <= 31):
            return match.group()
        found.add((float(month * 100 + day), DATE_UNIT))
        return " " * len(match.group())

    def replace_continued(match: re.Match[str]) -> str:
        """日期和它后面接着说的另一天（“至16日”）：同一个月的那一天也是一个日期（那几个字留着，读成“16日”，
        只说几日的句子也对得上它）。"""
        replaced = replace(match)
        month = numeral_value(match.group(1)) if match.group(1) and replaced != match.group() else None
        end = match.end()
        while month is not None and (more := DATE_CONTINUED.match(text, end)):
            day = numeral_value(more.group(1))
            if day is not None and 1 <= day <= 31:
                found.add((float(month * 100 + day), DATE_UNIT))
            end = more.end()
        return replaced
    return DATE.sub(replace_continued, text)


def exact(value: float) -> float:
    """乘上“万”“亿”之后的数取 12 位有效数字：1.1亿（1.1 × 10⁸ = 110000000.00000001）= 11000万。"""
    return float(f"{value:.12g}")


def magnitude_at(text: str, position: int) -> tuple[float, int]:
    """数字后面紧跟的“万”“亿”（可以连着几个）：(倍数, 跳过它们之后的位置)。"""
    factor = 1.0
    while position < len(text) and text[position] in MAGNITUDES:
        if factor < 1e12:  # “万亿”之后再多的“万”“亿”只会是乱码，不再乘（免得变成无穷大）
            factor *= MAGNITUDES[text[position]]
        position += 1
    return factor, position


def quantities_in(seen_text: Seen, claim: bool = False) -> set[Quantity]:
    """text 里的数量：{(数值, 单位)}。claim：这是回答里的句子，“例如……”后面举例的数不算
    （资料里举例的数照样算：句子可能正是在转述它）。"""
    found: set[Quantity] = set()
    text: str = seen_text
    if claim:
        text = EXAMPLE.sub(" ", text)
    text = read_dates(read_ordinals(text, found), found)
    if DIGIT.search(text):  # 没有数字的句子（大多数）不用做下面几遍替换
        text = ACRONYM_NUMBER.sub(" ", YEAR.sub(" ", ENUMERATOR.sub(" ", text)))
        matches = list(ARABIC.finditer(text))
        factors = [magnitude_at(text, match.end()) for match in matches]
        units = [unit_at(text, after) for _, after in factors]
        for index in range(len(matches) - 2, -1, -1):
            between = (matches[index].end(), matches[index + 1].start())
            if between[0] == between[1] or text[between[0]] not in JOINERS:
                continue  # 中间不是连接符（或空格开头的连接符）：不用再试正则
            next_too = index + 2 < len(matches) and DIMENSION.fullmatch(text, matches[index + 1].end(),
                                                                       matches[index + 2].start())
            last_too = index > 0 and DIMENSION.fullmatch(text, matches[index - 1].end(), matches[index].start())
            if CHAIN.fullmatch(text, *between) or DIMENSION.fullmatch(text, *between) and (next_too or last_too):
                units[index] = units[index + 1]  # 一串数字共用最后那个单位
        for match, unit, (factor, _) in zip(matches, units, factors, strict=True):
            digits = match.group(1).replace(",", "")
            if len(digits) > MAX_DIGITS:
                continue  # 几十位以上的一串数字不是一个数量（编号、哈希之类）；float() 读它还要花平方级的时间
            value = float(digits + (match.group(2) or "")[:MAX_DIGITS]) * factor
            found.add((exact(value), unit))
    for match in CHINESE_NUMERAL.finditer(text):
        numeral = match.group()
        after = text[match.end():match.end() + 1]
        if numeral in ("一", "壹") or not after or after not in MEASURE_WORDS:
            continue  # “一个”“一些”这类不是在说数量
        if after == "分" and (numeral == "十" or text.startswith("分之", match.end())):
            continue  # “十分”是“很”；“三分之一”“百分之五十”是分数，不逐字比较
        counted = chinese_value(numeral)
        if counted is not None:
            found.add((float(counted), normal_unit(after)))
    for match in ENGLISH_NUMBER_WORD.finditer(text):
        found.add((float(ENGLISH_NUMBERS[match.group().lower()]), unit_at(text, match.end())))
    return found


def numbers_in(text: Seen) -> set[float]:
    """text 里的数值集合（不管单位）。"""
    return {value for value, _ in quantities_in(text)}


def is_noun_unit(unit: str | None) -> bool:
    """“four drives”里的 drive 是个名词，不是计量单位：同一个数换个名词说（“two failures”“failure of two drives”）
    很常见，找数字时只比数值。gb、mm、ghz 这样的缩写才是单位。"""
    return unit is not None and len(unit) >= 4 and unit.isascii() and unit.isalpha() and unit not in MEASURE_UNITS


class Known:
    """资料里的全部数量，和比较时要用的两个集合：所有数值、带汉字量词的数值。一组资料只算一次
    （每个句子都重新从全部数量里算一遍，句子多、资料里的数也多时就是平方级的）。"""

    def __init__(self, quantities: Iterable[Quantity] = ()) -> None:
        self.quantities = frozenset(quantities)
        self.values = frozenset(value for value, _ in self.quantities)
        self.counted = frozenset(value for value, unit in self.quantities if unit and is_chinese_char(unit[0]))
        self.ordinals = frozenset(value for value, unit in self.quantities if is_ordinal(unit))
        self.days = frozenset(value % 100 for value, unit in self.quantities if unit == DATE_UNIT) | frozenset(
            value for value, unit in self.quantities if unit == DAY)

    def __contains__(self, quantity: object) -> bool:
        return quantity in self.quantities


def is_ordinal(unit: str | None) -> bool:
    return unit is not None and unit.startswith("第")


def found_in(quantity: Quantity, known: Known) -> bool:
    """资料里有这个数量。单位相同才算同一个数量；任何一边没有单位、或单位只是个名词时只比数值；
    通用的量词“个”和别的汉字量词算同一个单位（“两个盘位” = “两盘位”）；序数的量词可以不同（“第二位” = “第二名”）；
    日期对得上资料里说同一天的另一种写法：只说几日的（“16日”）对资料里这一天的日期，日期对资料里只说了几日的这一天。"""
    value, unit = quantity
    if quantity in known or (value, None) in known:
        return True
    if (unit is None or is_noun_unit(unit)) and value in known.values:
        return True
    if unit == "个" and value in known.counted or (value, "个") in known and unit and is_chinese_char(unit[0]):
        return True
    if is_ordinal(unit):
        return value in known.ordinals
    if unit == DAY:
        return value in known.days
    return unit == DATE_UNIT and (value % 100, DAY) in known


def unmatched_quantities(claimed: Set[Quantity], known: Known) -> list[float]:
    """句子里在资料中找不到的数量（见 found_in）。"""
    return sorted(value for value, unit in claimed if not found_in((value, unit), known))


def totals_in(text: Seen) -> set[Quantity]:
    """text 里作为总数说出的数量（“共有 90 个议席”里的 90 个）。"""
    found: set[Quantity] = set()
    for match in TOTAL.finditer(text):
        found |= quantities_in(Seen(text[match.end():match.end() + TOTAL_REACH]))
    return found


def contradicting_quantities(claimed: set[Quantity], nearby: set[Quantity], known: Known,
                             totals: Set[Quantity] = frozenset()) -> list[float]:
    """资料里和这句话最接近的地方，用同一个单位说了别的数、却没有说句子里的数：返回这些矛盾的数。

    nearby：最接近的那一句里的数量；known：整条资料里的数量；totals：句子里作为总数说出的数量。
    一个数出现在资料别处一般不算数（“RAID1 是两块盘”支持不了“RAID5 至少两块盘”）。只有两种例外，资料别处
    一字不差地说过就不算矛盾：日期（最接近的一句可能在说同一本书的另一个日期），和总数（最接近的一句可能只说了一部分）。
    序数不比：它是编号，最接近的一句里的另一个序数说的是另一集、另一届，不是矛盾（找不到它由 found_in 管）。"""
    found: list[float] = []
    exempt = {quantity for quantity in claimed if quantity[1] in (DATE_UNIT, DAY) or quantity in totals}
    checked = claimed - {quantity for quantity in exempt if found_in(quantity, known)}
    for unit in {unit for _, unit in checked if unit and not is_ordinal(unit)}:
        said = {value for value, u in checked if u == unit}
        there = {value for value, u in nearby if u == unit}
        if there and not said & there:
            found += sorted(said)
    return sorted(found)
