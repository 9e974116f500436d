"""数量：句子和资料里的数字按同一种方式读出来，比较的是值和单位，不是写法。

阿拉伯数字（带“万”“亿”、K/M/B、million 这样的倍数，27,400 = 27400），中文数字（三块 = 3 块，
贰仟玖佰玖拾玖元 = 2999 元），英文的数词，和各种别的写法（numerals.py：序数、日期、年份、分数、罗马数字、
俩/仨、句首的编号）都读成 (数值, 单位)。
全角、别的文字的数字、带圈的数字、兼容字符由 reading.py 在读的时候统一，这里读的是 Seen。“RAID5”“i5”这样的名称、
“1)”“2、”“(1)”这样的列表序号、“第 5 步”都不算数量。一个单位写一次、管一串数（“3/4/5 盘位”“5020x1945x1775mm”）。
每个数量记着它在文字里的位置（quantity_spans）。
"""
import re
from collections.abc import Iterable

from sourced_answers.checker.numerals import (
    CHINESE_NUMERAL,
    COLLECTIVE,
    COLLECTIVE_VALUES,
    DATE_UNIT,
    DAY,
    MAGNITUDES,
    MEASURE_WORDS,
    ROMAN_HINT,
    ROMAN_LETTERS,
    SOURCE_ROMAN,
    YEAR_UNIT,
    Found,
    Quantity,
    Span,
    blank,
    chinese_value,
    exact,
    leading_enumerator,
    read_dates,
    read_fractions,
    read_ordinals,
    read_years,
    roman_value,
)
from sourced_answers.checker.reading import Seen
from sourced_answers.checker.text import CJK, is_chinese_char
from sourced_answers.checker.tokens import ENGLISH_NUMBERS

__all__ = ["DATE_UNIT", "DAY", "YEAR_UNIT", "Found", "Known", "Quantity", "Span", "found_in", "is_noun_unit",
           "numbers_in", "quantities_in", "quantity_spans", "totals_in"]

# 计数用的量词彼此常换着用（“10 个小兽”和“10 只小兽”），比较时当作同一个单位
COUNTERS = set("个只名位家头件台张条项本部座所间辆架艘颗粒杯瓶碗首")
UNIT_SYNONYMS = {"cm": "厘", "mm": "毫", "kg": "公", "km": "公", "％": "%"}
# 前面是字母的数字是名称的一部分（RAID5、i5），只有“5020x1945”这种尺寸里 x 后面的数字除外
ARABIC = re.compile(r"(?:(?<![A-Za-z0-9.])|(?<=[0-9][xX]))([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(\.[0-9]+)?(?![0-9])")
# RAID 5、USB3：名称，不是数量（缩写要从头开始，免得在一长串大写字母上逐位回溯）
ACRONYM_NUMBER = re.compile(r"(?<![A-Z])[A-Z]{2,} ?[0-9]+")
ENUMERATOR = re.compile(r"(?:^|(?<=[\s:：;；,，。]))[0-9]{1,2}(?:[)）、]|\.(?=\s))")
UNIT_AFTER = re.compile(rf"[ \t]?([A-Za-z]+|[%％]|[{CJK}])")
GLUED_NAME = re.compile(r"(?<=[a-z])[A-Z]+$")
# 一串数字共用后面的单位：“3/4/5 盘位”“3-5 块”；尺寸“5020x1945x1775mm”要三个数以上（“2x8GB”是两条 8GB）
CHAIN = re.compile(r"[ \t]*[/／~～–-][ \t]*")
DIMENSION = re.compile(r"[ \t]*[xX×][ \t]*")
JOINERS = set(" \t/／~～–-xX×")  # CHAIN、DIMENSION 能开头的字符
MAX_DIGITS = 30
# 总数：“共有 90 个议席”“一共三块盘”“total of 12”。最接近的一句常常只说了其中一部分（“其中 30 个议席……”）
TOTAL = re.compile(r"(?:总共|一共|合计|总计|共计|总数[为是]?|共有|共"
                   r"|(?<![A-Za-z])(?:in total|a total of|total of))[ \t]*", re.IGNORECASE)
TOTAL_REACH = 12
# 举例用的数：“例如 100 元的商品……”说的是规则，不是事实，不拿来比
EXAMPLE = re.compile(r"(?:例如|比如|譬如|诸如|举例来说|举个例子|举例|打个比方|比方说|假如|假设|如果|假若|倘若|要是"
                     r"|以[^。；;，,！？!?\n]{1,20}为例|e\.g\.|for example|for instance|suppose|if you)"
                     r"[^。；;！？!?\n]*", re.IGNORECASE)
# 四个字母以上、却是计量单位的缩写
# 拉丁字母写的计量单位：数字后面是这些时单位要一样才算同一个数量（5 GB ≠ 5 TB）；别的词（“five wins”“type 2 is”
# “539 BC”）是名词或者只是下一个词，找数字时只比数值
MEASURE_UNITS = {
    "mbps", "gbps", "kbps", "iops", "kwh", "mhz", "ghz", "khz", "rpm", "inch", "byte", "bytes", "k", "m", "g", "kg",
    "mg", "mm", "cm", "km", "ml", "l", "gb", "tb", "mb", "kb", "pb", "gib", "mib", "tib", "kib", "hz", "w", "kw", "mw",
    "gw", "v", "mah", "ah", "wh", "ft", "lb", "lbs", "oz", "mph", "kph", "fps", "dpi", "ppi", "px", "s", "ms", "ns",
    "us", "min", "h", "hr", "hrs", "x", "p", "nm", "db", "bit", "bits", "psi", "cc", "厘", "毫", "公"}
# 不当作复数去掉 s 的单位
PLURAL_KEEP = {"mbps", "gbps", "kbps", "fps", "ips", "bps", "iops", "ms", "ns", "us", "hdds", "ssds"}
# 英文的倍数：紧跟的 K、M、B（后面不是字母：“100K”“1.5M”，不是“5 MB”“5m”），或者隔一个空格的 thousand、million……
ENGLISH_MAGNITUDES = {"K": 1e3, "k": 1e3, "M": 1e6, "B": 1e9, "thousand": 1e3, "million": 1e6, "billion": 1e9,
                      "trillion": 1e12}
ENGLISH_MAGNITUDE = re.compile(r"([KkMB])(?![A-Za-z0-9])|[ \t]?((?i:thousand|million|billion|trillion))(?![A-Za-z])")
MULTIPLIER_WORDS = {"hundred", "thousand"}
ENGLISH_NUMBER_WORD = re.compile(r"(?<![A-Za-z])(" + "|".join(ENGLISH_NUMBERS) + r")(?![A-Za-z])", re.IGNORECASE)
DIGIT = re.compile(r"[0-9]")
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
def magnitude_at(text: str, position: int) -> tuple[float, int]:
    """数字后面紧跟的“百”“千”“万”“亿”（可以连着几个）、英文的 100K、1.5M、2B，和 2.5 million 这样的词：
    (倍数, 跳过它们之后的位置)。"""
    english = ENGLISH_MAGNITUDE.match(text, position)
    if english:
        return ENGLISH_MAGNITUDES[english.group(1) or english.group(2).lower()], english.end()
    factor = 1.0
    while position < len(text) and text[position] in MAGNITUDES:
        if factor < 1e12:  # “万亿”之后再多的“万”“亿”只会是乱码，不再乘（免得变成无穷大）
            factor *= MAGNITUDES[text[position]]
        position += 1
    return factor, position
def quantities_in(seen_text: Seen, claim: bool = False) -> set[Quantity]:
    """text 里的数量：{(数值, 单位)}。claim：这是回答里的句子，“例如……”后面举例的数不算
    （资料里举例的数照样算：句子可能正是在转述它）。"""
    return {quantity for quantity, _ in quantity_spans(seen_text, claim)}


def quantity_spans(seen_text: Seen, claim: bool = False, single: bool = False) -> Found:
    """text 里的数量和它们的位置：[((数值, 单位), (开始, 结束))]，按 quantities_in 的读法。
    single：“一块”“一个”也读成 1（同一处两边比数时：“容忍一块盘”对“容忍两块盘”）；平常不读，“一个好选择”里的
    “一个”不是在说数量。"""
    found: Found = []
    text: str = seen_text
    if claim:
        text = EXAMPLE.sub(blank, text)
    text = read_fractions(text, found)
    text = read_years(read_dates(read_ordinals(leading_enumerator(text), found), found), found)
    if DIGIT.search(text):  # 没有数字的句子（大多数）不用做下面几遍替换
        text = ACRONYM_NUMBER.sub(blank, ENUMERATOR.sub(blank, text))
        arabic(text, found)
    for match in CHINESE_NUMERAL.finditer(text):
        numeral = match.group()
        after = text[match.end():match.end() + 1]
        if not large_numeral(numeral) and (numeral in ("一", "壹") and not single or not after
                                           or after not in MEASURE_WORDS):
            continue  # “一个”“一些”这类不是在说数量
        if after == "分" and (numeral == "十" or text.startswith("分之", match.end())):
            continue  # “十分”是“很”；“三分之一”“百分之五十”是分数，不逐字比较
        counted = chinese_value(numeral)
        if counted is not None:
            found.append(((float(counted), normal_unit(after) if after else None), match.span()))
    if "俩" in text or "仨" in text:
        for match in COLLECTIVE.finditer(text):
            found.append(((float(COLLECTIVE_VALUES[match.group()]), "个"), match.span()))
    if ROMAN_HINT.search(text):
        for match in ROMAN_LETTERS.finditer(text):
            after = text[match.end():match.end() + 1]
            if match.group() and after and after in MEASURE_WORDS:
                found.append(((float(roman_value(match.group())), normal_unit(after)), match.span()))
        if not claim:
            for match in SOURCE_ROMAN.finditer(text):
                found.append(((float(roman_value(match.group())), None), match.span()))
    for match in ENGLISH_NUMBER_WORD.finditer(text):
        word = match.group().lower()
        if word in MULTIPLIER_WORDS and DIGIT.search(text, max(0, match.start() - 2), match.start()):
            continue  # “2.5 thousand”里的 thousand 是前面那个数的倍数
        found.append(((float(ENGLISH_NUMBERS[word]), unit_at(text, match.end())), match.span()))
    return found
# 数字开头、带着“百”“千”“万”“亿”的中文数（“三十万棋谱”“五百人次”）：后面不是量词也是数量。“千万”“万一”
# “百年”这样不以数字开头的词不算
LARGE_NUMERAL = re.compile(r"[一壹二贰两三叁四肆五伍六陆七柒八捌九玖][零〇一壹二贰两三叁四肆五伍六陆七柒八捌九玖十拾]*"
                           r"[百佰千仟万亿][零〇一壹二贰两三叁四肆五伍六陆七柒八捌九玖十拾百佰千仟万亿]*")


def large_numeral(numeral: str) -> bool:
    return LARGE_NUMERAL.fullmatch(numeral) is not None


def arabic(text: str, found: Found) -> None:
    """阿拉伯数字的数量（带“万”“亿”、单位，一串数共用后面的单位）放进 found。"""
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
    for match, unit, (factor, end) in zip(matches, units, factors, strict=True):
        digits = match.group(1).replace(",", "")
        if len(digits) > MAX_DIGITS:
            continue  # 几十位以上的一串数字不是一个数量（编号、哈希之类）；float() 读它还要花平方级的时间
        value = float(digits + (match.group(2) or "")[:MAX_DIGITS]) * factor
        found.append(((exact(value), unit), (match.start(), end)))
def numbers_in(text: Seen) -> set[float]:
    """text 里的数值集合（不管单位）。"""
    return {value for value, _ in quantities_in(text)}
def is_noun_unit(unit: str | None) -> bool:
    """“four drives”里的 drive 是个名词，不是计量单位：同一个数换个名词说（“two failures”“failure of two drives”）
    很常见，找数字时只比数值。gb、mm、ghz 这样的缩写才是单位（MEASURE_UNITS）。"""
    return unit is not None and unit.isascii() and unit.isalpha() and unit not in MEASURE_UNITS
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
def totals_in(text: Seen) -> set[Quantity]:
    """text 里作为总数说出的数量（“共有 90 个议席”里的 90 个）。"""
    found: set[Quantity] = set()
    for match in TOTAL.finditer(text):
        found |= quantities_in(Seen(text[match.end():match.end() + TOTAL_REACH]))
    return found
