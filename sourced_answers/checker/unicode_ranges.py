"""五类字符的码位范围，由 unicodedata 生成（不要手改：python -m sourced_answers.checker.unicode_ranges 重新生成）。

  LINE_UNSAFE  控制字符（Cc）、格式字符（Cf：零宽字符、软连字符、双向控制、BOM、标签字符）、行分隔符和段分隔符
               （Zl、Zp）：放进一行说明里会断行、乱序或者看不见。说明里引用用户给的字符串、一行里引用一句话，
               都按这一份（text.literal、text.one_line）。
  MARKS        组合用的附加符号（Mn、Me）：叠在前一个字上，夹在密钥的字中间时密钥照样认得出来（遮密钥时当作看不见）。
  NUMERIC      读者当作一个整数读的字，而 NFKC 不把它变成 ASCII 数字：❺、罗马数字 Ⅳ、杭州数码 〥、㈤、㊄……
               （上标、下标的数字和 〇 除外：它们另有读法）。reading.py 把它们读成数字。
  COMPATIBLE   NFKC 会换成别的字的兼容字符：康熙部首 ⼀、兼容汉字、带圈和带括号的数字 ① ⑸ ⒌、连字 ﬁ、单位 ㎏……
               （NUMERIC 里的、各种空格、全角的 ASCII、上标下标的数字、省略号，以及换出来带附加符号或以空格开头的
               除外：它们另有读法，或者换了反而不像读者看到的）。reading.py 把它们读成 NFKC 的样子。
  ASCII_LIKE   NFKC 会换成可打印 ASCII 的字：全角的 ｓ－、数学字母 𝐬、带圈的 ⓢ、连字 ﬁ、上标 ˢ、单位 ㎏……读者把它们读成
               那几个 ASCII 字母，夹在密钥里时照样认得出那个密钥（core/key_views.py 找密钥时读成 NFKC 的样子）。
每段是“起-止”两个十六进制码位。Python 的 unicodedata 换了 Unicode 版本时，tests/test_unicode_ranges.py 会提醒重新生成。
在导入时现算一遍要扫描一百一十多万个码位（零点几秒），每次启动都付不起，所以存成数据。
"""
import sys
import unicodedata
from collections.abc import Callable

UNICODE_VERSION = "14.0.0"
# 生成：开始
LINE_UNSAFE = """
0-1f 7f-9f ad-ad 600-605 61c-61c 6dd-6dd 70f-70f 890-891 8e2-8e2 180e-180e 200b-200f 2028-202e 2060-2064 2066-206f
feff-feff fff9-fffb 110bd-110bd 110cd-110cd 13430-13438 1bca0-1bca3 1d173-1d17a e0001-e0001 e0020-e007f
"""
MARKS = """
300-36f 483-489 591-5bd 5bf-5bf 5c1-5c2 5c4-5c5 5c7-5c7 610-61a 64b-65f 670-670 6d6-6dc 6df-6e4 6e7-6e8 6ea-6ed
711-711 730-74a 7a6-7b0 7eb-7f3 7fd-7fd 816-819 81b-823 825-827 829-82d 859-85b 898-89f 8ca-8e1 8e3-902 93a-93a
93c-93c 941-948 94d-94d 951-957 962-963 981-981 9bc-9bc 9c1-9c4 9cd-9cd 9e2-9e3 9fe-9fe a01-a02 a3c-a3c a41-a42
a47-a48 a4b-a4d a51-a51 a70-a71 a75-a75 a81-a82 abc-abc ac1-ac5 ac7-ac8 acd-acd ae2-ae3 afa-aff b01-b01 b3c-b3c
b3f-b3f b41-b44 b4d-b4d b55-b56 b62-b63 b82-b82 bc0-bc0 bcd-bcd c00-c00 c04-c04 c3c-c3c c3e-c40 c46-c48 c4a-c4d
c55-c56 c62-c63 c81-c81 cbc-cbc cbf-cbf cc6-cc6 ccc-ccd ce2-ce3 d00-d01 d3b-d3c d41-d44 d4d-d4d d62-d63 d81-d81
dca-dca dd2-dd4 dd6-dd6 e31-e31 e34-e3a e47-e4e eb1-eb1 eb4-ebc ec8-ecd f18-f19 f35-f35 f37-f37 f39-f39 f71-f7e
f80-f84 f86-f87 f8d-f97 f99-fbc fc6-fc6 102d-1030 1032-1037 1039-103a 103d-103e 1058-1059 105e-1060 1071-1074
1082-1082 1085-1086 108d-108d 109d-109d 135d-135f 1712-1714 1732-1733 1752-1753 1772-1773 17b4-17b5 17b7-17bd
17c6-17c6 17c9-17d3 17dd-17dd 180b-180d 180f-180f 1885-1886 18a9-18a9 1920-1922 1927-1928 1932-1932 1939-193b
1a17-1a18 1a1b-1a1b 1a56-1a56 1a58-1a5e 1a60-1a60 1a62-1a62 1a65-1a6c 1a73-1a7c 1a7f-1a7f 1ab0-1ace 1b00-1b03
1b34-1b34 1b36-1b3a 1b3c-1b3c 1b42-1b42 1b6b-1b73 1b80-1b81 1ba2-1ba5 1ba8-1ba9 1bab-1bad 1be6-1be6 1be8-1be9
1bed-1bed 1bef-1bf1 1c2c-1c33 1c36-1c37 1cd0-1cd2 1cd4-1ce0 1ce2-1ce8 1ced-1ced 1cf4-1cf4 1cf8-1cf9 1dc0-1dff
20d0-20f0 2cef-2cf1 2d7f-2d7f 2de0-2dff 302a-302d 3099-309a a66f-a672 a674-a67d a69e-a69f a6f0-a6f1 a802-a802
a806-a806 a80b-a80b a825-a826 a82c-a82c a8c4-a8c5 a8e0-a8f1 a8ff-a8ff a926-a92d a947-a951 a980-a982 a9b3-a9b3
a9b6-a9b9 a9bc-a9bd a9e5-a9e5 aa29-aa2e aa31-aa32 aa35-aa36 aa43-aa43 aa4c-aa4c aa7c-aa7c aab0-aab0 aab2-aab4
aab7-aab8 aabe-aabf aac1-aac1 aaec-aaed aaf6-aaf6 abe5-abe5 abe8-abe8 abed-abed fb1e-fb1e fe00-fe0f fe20-fe2f
101fd-101fd 102e0-102e0 10376-1037a 10a01-10a03 10a05-10a06 10a0c-10a0f 10a38-10a3a 10a3f-10a3f 10ae5-10ae6
10d24-10d27 10eab-10eac 10f46-10f50 10f82-10f85 11001-11001 11038-11046 11070-11070 11073-11074 1107f-11081
110b3-110b6 110b9-110ba 110c2-110c2 11100-11102 11127-1112b 1112d-11134 11173-11173 11180-11181 111b6-111be
111c9-111cc 111cf-111cf 1122f-11231 11234-11234 11236-11237 1123e-1123e 112df-112df 112e3-112ea 11300-11301
1133b-1133c 11340-11340 11366-1136c 11370-11374 11438-1143f 11442-11444 11446-11446 1145e-1145e 114b3-114b8
114ba-114ba 114bf-114c0 114c2-114c3 115b2-115b5 115bc-115bd 115bf-115c0 115dc-115dd 11633-1163a 1163d-1163d
1163f-11640 116ab-116ab 116ad-116ad 116b0-116b5 116b7-116b7 1171d-1171f 11722-11725 11727-1172b 1182f-11837
11839-1183a 1193b-1193c 1193e-1193e 11943-11943 119d4-119d7 119da-119db 119e0-119e0 11a01-11a0a 11a33-11a38
11a3b-11a3e 11a47-11a47 11a51-11a56 11a59-11a5b 11a8a-11a96 11a98-11a99 11c30-11c36 11c38-11c3d 11c3f-11c3f
11c92-11ca7 11caa-11cb0 11cb2-11cb3 11cb5-11cb6 11d31-11d36 11d3a-11d3a 11d3c-11d3d 11d3f-11d45 11d47-11d47
11d90-11d91 11d95-11d95 11d97-11d97 11ef3-11ef4 16af0-16af4 16b30-16b36 16f4f-16f4f 16f8f-16f92 16fe4-16fe4
1bc9d-1bc9e 1cf00-1cf2d 1cf30-1cf46 1d167-1d169 1d17b-1d182 1d185-1d18b 1d1aa-1d1ad 1d242-1d244 1da00-1da36
1da3b-1da6c 1da75-1da75 1da84-1da84 1da9b-1da9f 1daa1-1daaf 1e000-1e006 1e008-1e018 1e01b-1e021 1e023-1e024
1e026-1e02a 1e130-1e136 1e2ae-1e2ae 1e2ec-1e2ef 1e8d0-1e8d6 1e944-1e94a e0100-e01ef
"""
NUMERIC = """
9f9-9f9 bf0-bf2 c78-c7e d70-d72 1369-137c 16ee-16f0 17f0-17f9 19da-19da 2160-2182 2185-2188 24eb-24ff 2776-2793
3021-3029 3038-303a 3192-3195 3220-3229 3248-324f 3280-3289 a6e6-a6ef 10107-10133 10142-10174 1018a-1018a
102e1-102fb 10320-10323 10341-10341 1034a-1034a 103d1-103d5 10858-1085f 10879-1087f 108a7-108af 108fb-108ff
10916-1091b 109c0-109cf 109d2-109f5 10a40-10a47 10a7d-10a7e 10a9d-10a9f 10aeb-10aef 10b58-10b5f 10b78-10b7f
10ba9-10baf 10cfa-10cff 10e60-10e7a 10f1d-10f25 10f51-10f54 10fc5-10fcb 11052-11065 111e1-111f4 1173a-1173b
118ea-118f2 11c5a-11c6c 12400-12459 12467-1246e 16b5b-16b61 16e80-16e96 1d2e0-1d2f3 1d360-1d378 1e8c7-1e8cf
1ec71-1ecab 1ecb1-1ecb4 1ed01-1ed2d 1ed2f-1ed3b 1f10b-1f10c
"""
COMPATIBLE = """
aa-aa b5-b5 ba-ba bc-be 132-133 13f-140 149-149 17f-17f 1c4-1cc 1f1-1f3 2b0-2b8 2e0-2e4 374-374 37e-37e 387-387
3d0-3d6 3f0-3f2 3f4-3f5 3f9-3f9 587-587 675-678 e33-e33 eb3-eb3 edc-edd f0c-f0c f43-f43 f4d-f4d f52-f52 f57-f57
f5c-f5c f69-f69 f93-f93 f9d-f9d fa2-fa2 fa7-fa7 fac-fac fb9-fb9 10fc-10fc 1d2c-1d2e 1d30-1d3a 1d3c-1d4d 1d4f-1d6a
1d78-1d78 1d9b-1dbf 1e9a-1e9b 1f71-1f71 1f73-1f73 1f75-1f75 1f77-1f77 1f79-1f79 1f7b-1f7b 1f7d-1f7d 1fbb-1fbb
1fbe-1fbe 1fc9-1fc9 1fcb-1fcb 1fd3-1fd3 1fdb-1fdb 1fe3-1fe3 1feb-1feb 1fef-1fef 1ff9-1ff9 1ffb-1ffb 2011-2011
2024-2024 2033-2034 2036-2037 203c-203c 2047-2049 2057-2057 2071-2071 207a-207f 208a-208e 2090-209c 20a8-20a8
2100-2103 2105-2107 2109-2113 2115-2116 2119-211d 2120-2122 2124-2124 2126-2126 2128-2128 212a-212d 212f-2131
2133-2139 213b-2140 2145-2149 2150-215f 2189-2189 222c-222d 222f-2230 2329-232a 2460-24ea 2a0c-2a0c 2a74-2a76
2c7c-2c7d 2d6f-2d6f 2e9f-2e9f 2ef3-2ef3 2f00-2fd5 3036-3036 309f-309f 30ff-30ff 3131-318e 3196-319f 3200-321e
322a-3247 3250-327e 328a-33ff a69c-a69d a770-a770 a7f2-a7f4 a7f8-a7f9 ab5c-ab5f ab69-ab69 f900-fa0d fa10-fa10
fa12-fa12 fa15-fa1e fa20-fa20 fa22-fa22 fa25-fa26 fa2a-fa6d fa70-fad9 fb00-fb06 fb13-fb17 fb20-fb29 fb4f-fbb1
fbd3-fc5a fc64-fc8f fc91-fcd8 fcda-fcf1 fcf5-fd3b fd50-fd8f fd92-fdc7 fdf0-fdfc fe10-fe19 fe30-fe44 fe47-fe48
fe4d-fe52 fe54-fe66 fe68-fe6b fe80-fefc ff5f-ff9d ffa0-ffbe ffc2-ffc7 ffca-ffcf ffd2-ffd7 ffda-ffdc ffe0-ffe2
ffe4-ffe6 ffe8-ffee 10781-10785 10787-107b0 107b2-107ba 1d400-1d454 1d456-1d49c 1d49e-1d49f 1d4a2-1d4a2 1d4a5-1d4a6
1d4a9-1d4ac 1d4ae-1d4b9 1d4bb-1d4bb 1d4bd-1d4c3 1d4c5-1d505 1d507-1d50a 1d50d-1d514 1d516-1d51c 1d51e-1d539
1d53b-1d53e 1d540-1d544 1d546-1d546 1d54a-1d550 1d552-1d6a5 1d6a8-1d7cb 1d7ce-1d7ff 1ee00-1ee03 1ee05-1ee1f
1ee21-1ee22 1ee24-1ee24 1ee27-1ee27 1ee29-1ee32 1ee34-1ee37 1ee39-1ee39 1ee3b-1ee3b 1ee42-1ee42 1ee47-1ee47
1ee49-1ee49 1ee4b-1ee4b 1ee4d-1ee4f 1ee51-1ee52 1ee54-1ee54 1ee57-1ee57 1ee59-1ee59 1ee5b-1ee5b 1ee5d-1ee5d
1ee5f-1ee5f 1ee61-1ee62 1ee64-1ee64 1ee67-1ee6a 1ee6c-1ee72 1ee74-1ee77 1ee79-1ee7c 1ee7e-1ee7e 1ee80-1ee89
1ee8b-1ee9b 1eea1-1eea3 1eea5-1eea9 1eeab-1eebb 1f100-1f10a 1f110-1f12e 1f130-1f14f 1f16a-1f16c 1f190-1f190
1f200-1f202 1f210-1f23b 1f240-1f248 1f250-1f251 1fbf0-1fbf9 2f800-2fa1d
"""
ASCII_LIKE = """
aa-aa b2-b3 b9-ba 132-133 17f-17f 1c7-1cc 1f1-1f3 2b0-2b0 2b2-2b3 2b7-2b8 2e1-2e3 37e-37e 1d2c-1d2c 1d2e-1d2e
1d30-1d31 1d33-1d3a 1d3c-1d3c 1d3e-1d43 1d47-1d49 1d4d-1d4d 1d4f-1d50 1d52-1d52 1d56-1d58 1d5b-1d5b 1d62-1d65
1d9c-1d9c 1da0-1da0 1dbb-1dbb 1fef-1fef 2024-2026 203c-203c 2047-2049 2070-2071 2074-207a 207c-208a 208c-208e
2090-2093 2095-209c 20a8-20a8 2100-2102 2105-2106 210a-210e 2110-2113 2115-2116 2119-211d 2120-2122 2124-2124
2128-2128 212a-212a 212c-212d 212f-2131 2133-2134 2139-2139 213b-213b 2145-2149 2160-217f 2460-24ea 2a74-2a76
2c7c-2c7d 3250-325f 32b1-32bf 32cc-32cf 3371-337a 3380-3381 3383-338b 338e-3394 3396-339a 339c-33a6 33a9-33ad
33b0-33b1 33b3-33b5 33b7-33bb 33bd-33bf 33c2-33c5 33c7-33dd 33ff-33ff a7f2-a7f4 fb00-fb06 fb29-fb29 fe10-fe10
fe13-fe16 fe19-fe19 fe30-fe30 fe33-fe38 fe47-fe48 fe4d-fe50 fe52-fe52 fe54-fe57 fe59-fe5c fe5f-fe66 fe68-fe6b
ff01-ff5e 107a5-107a5 1d400-1d454 1d456-1d49c 1d49e-1d49f 1d4a2-1d4a2 1d4a5-1d4a6 1d4a9-1d4ac 1d4ae-1d4b9
1d4bb-1d4bb 1d4bd-1d4c3 1d4c5-1d505 1d507-1d50a 1d50d-1d514 1d516-1d51c 1d51e-1d539 1d53b-1d53e 1d540-1d544
1d546-1d546 1d54a-1d550 1d552-1d6a3 1d7ce-1d7ff 1f100-1f10a 1f110-1f129 1f12b-1f12e 1f130-1f14f 1f16a-1f16c
1f190-1f190 1fbf0-1fbf9
"""
# 生成：结束
CATEGORIES = {"LINE_UNSAFE": frozenset({"Cc", "Cf", "Zl", "Zp"}), "MARKS": frozenset({"Mn", "Me"})}
# 上标、下标的数字（reading.py 按它们的位置读成数、指数或脚注）
SCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"
ASCII_DIGIT = frozenset("0123456789")


def numeric(char: str) -> bool:
    """NUMERIC 的一个字：No、Nl 类、数值是非负整数，NFKC 之后没有 ASCII 数字（见模块说明）。"""
    if unicodedata.category(char) not in ("No", "Nl") or char in SCRIPT_DIGITS or char == "〇":
        return False
    value = unicodedata.numeric(char, -1.0)
    return value >= 0 and value == int(value) and not ASCII_DIGIT & set(unicodedata.normalize("NFKC", char))


def compatible(char: str) -> bool:
    """COMPATIBLE 的一个字（见模块说明）。"""
    normal = unicodedata.normalize("NFKC", char)
    if normal == char or unicodedata.category(char).startswith("Z") or char in SCRIPT_DIGITS or char in "…‥":
        return False
    if "\uff01" <= char <= "\uff5e" or normal[:1].isspace() or any(map(unicodedata.combining, normal)):
        return False
    return not numeric(char)


def ascii_like(char: str) -> bool:
    """ASCII_LIKE 的一个字（见模块说明）：NFKC 换成了别的字，换出来的都是可打印的 ASCII（可以夹着空格，
    不能全是空格）。"""
    normal = unicodedata.normalize("NFKC", char)
    return normal != char and bool(normal.strip()) and all(" " <= part <= "~" for part in normal)


def in_categories(categories: frozenset[str]) -> Callable[[str], bool]:
    return lambda char: unicodedata.category(char) in categories


PREDICATES: dict[str, Callable[[str], bool]] = {
    **{name: in_categories(categories) for name, categories in CATEGORIES.items()},
    "NUMERIC": numeric, "COMPATIBLE": compatible, "ASCII_LIKE": ascii_like}


def parsed(ranges: str) -> list[tuple[int, int]]:
    """“起-止 起-止 …” → [(起, 止), …]。"""
    pairs = (item.split("-") for item in ranges.split())
    return [(int(start, 16), int(end, 16)) for start, end in pairs]


def character_class(ranges: str) -> str:
    """正则表达式的字符类里的部分（放进方括号）：这些范围，码位写成 \\U 转义，不会和 ]、-、\\ 混淆。"""
    return "".join(f"\\U{start:08x}-\\U{end:08x}" for start, end in parsed(ranges))


def computed(belongs: Callable[[str], bool]) -> list[tuple[int, int]]:
    """按这个 Python 的 unicodedata 现算：belongs 说属于这一类的码位，连续的合成一段。"""
    found: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if not belongs(chr(code)):
            continue
        if found and found[-1][1] == code - 1:
            found[-1] = (found[-1][0], code)
        else:
            found.append((code, code))
    return found


def formatted(ranges: list[tuple[int, int]], width: int = 116) -> str:
    lines, line = [], ""
    for start, end in ranges:
        item = f"{start:x}-{end:x}"
        if line and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    return "\n" + "\n".join([*lines, line]) + "\n"


def generated_source(source: str) -> str:
    """把本文件“生成”两行标记之间的部分换成按这个 Python 的 unicodedata 现算的结果。"""
    head, rest = source.split("# 生成：开始\n", 1)
    _, tail = rest.split("# 生成：结束\n", 1)
    body = "".join(f'{name} = """{formatted(computed(belongs))}"""\n' for name, belongs in PREDICATES.items())
    head = head.replace(f'UNICODE_VERSION = "{UNICODE_VERSION}"', f'UNICODE_VERSION = "{unicodedata.unidata_version}"')
    return f"{head}# 生成：开始\n{body}# 生成：结束\n{tail}"


if __name__ == "__main__":
    from pathlib import Path
    path = Path(__file__)
    path.write_text(generated_source(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"已按 Unicode {unicodedata.unidata_version} 重新生成 {path.name}")
