"""--fix 的改写有没有把被标出的说法藏起来，而不是真的删掉或改对。

改写可以不删掉一句编造的话，只把它挪到不核对的地方：没有句末标点的短标题、代码块里，缩成一句“太短、不判”的话，
或者和另一句被标出的话并成一句（问题的个数少了一个，两句话都还在）。这里把改写前被标出的每一句（和没有引用的整块）
在改写后的回答里找一遍：

  · 认的是它自己的内容——资料里找不到的那些词（编造的部分；全都能找到时就用它的全部内容词）和资料里找不到的数；
  · 改写后的回答分成三种地方：核对过、通过了的句子；核对过、被标出的句子（和没有引用的块）；其余的一切
    （标题、代码块、太短不判的句子），也就是“不核对的地方”；
  · 它编造的词（资料里找不到的）有两个出现在改写后新增的不核对的地方（没有编造的词时，一半以上的内容词），
    或者它的一个找不到的数出现在那里：藏起来了；
  · 内容既不在不核对的地方、也不在被标出的句子里：真的删掉了或者改对了（“问题少了”只算这一种）。
只用 checker 的纯函数：字符串进，数据出。
"""
from collections.abc import Sequence
from dataclasses import dataclass

from sourced_answers.checker import (
    Report,
    SourceIndexes,
    analyse,
    checked_indexes,
    claim_words,
    claims_with_positions,
    kind_of,
    numbers_in,
    quote,
    read_claim,
    seen,
    strip_terminal,
    token_set,
)

# 一句被标出的话至少有这么多个“认得出它的”词、而且这么大的比例出现在某个地方，才算它还在那里
MIN_WORDS = 2
SHARE = 0.5


@dataclass
class Places:
    """一个回答的三种地方里各有哪些词和数。"""
    passing: set[str]
    flagged: set[str]
    unchecked: set[str]
    unchecked_numbers: set[float]


@dataclass
class Fate:
    """改写前被标出的一句话在改写后去了哪里。"""
    text: str
    hidden: bool  # 挪到了不核对的地方
    still_flagged: bool  # 还在被标出的句子里


def places_of(answer: str, report: Report) -> Places:
    """把回答的文字分到三种地方（见模块说明）。"""
    answer = strip_terminal(answer)
    structure = analyse(answer)
    uncited_claims = {position for unit in structure.uncited for position in unit.claims}
    passing: list[str] = []
    flagged: list[str] = []
    blanked = list(answer)
    for position, ((claim, span), index) in enumerate(zip(claims_with_positions(answer),
                                                         checked_indexes(structure.claims), strict=True)):
        if index is not None:
            status = report.claims[index].status if index < len(report.claims) else "too_short"
            if status == "too_short":
                continue  # 太短、不判：不核对的地方
            (passing if status == "supported" else flagged).append(read_claim(claim.body).text)
        elif position in uncited_claims:
            flagged.append(read_claim(claim.body).text)
        else:
            continue  # 引导语之类：不核对的地方
        if span:
            blanked[span[0]:span[1]] = " " * (span[1] - span[0])
    rest = seen("".join(blanked))  # 不核对的地方也按同一种读法读：藏在 **粗体** 里、零宽字符中间的说法照样认得出
    return Places(token_set(seen(" ".join(passing))), token_set(seen(" ".join(flagged))), token_set(rest),
                  numbers_in(rest))


def flagged_texts(answer: str, report: Report) -> list[str]:
    """改写前被标出的句子和没有引用的块的文字（每个一次）。"""
    structure = analyse(strip_terminal(answer))
    positions = {index: position for position, index in enumerate(checked_indexes(structure.claims))
                 if index is not None}
    texts: list[str] = []
    for problem in report.problems:
        if problem.claim is not None and problem.claim in positions:
            texts.append(structure.claims[positions[problem.claim]].body)
        elif kind_of(problem.kind).about == "block" and problem.sentence:
            texts.append(problem.sentence)
    return list(dict.fromkeys(texts))


@dataclass(frozen=True)
class Identity:
    """认得出一句被标出的话的东西：资料里找不到的内容词（编造的部分）、它全部的内容词、资料里找不到的数。"""
    novel: set[str]
    words: set[str]
    numbers: set[float]

    def hidden_in(self, words: set[str], numbers: set[float]) -> bool:
        """它还在这些（改写新增的、不核对的）地方：编造的词有两个在那里（哪怕只是一小部分：缩成“能煮咖啡 [2]。”
        也是把编造的说法留下了），或者一个找不到的数在那里；没有编造的词时，要一半以上的内容词在那里。"""
        if self.numbers & numbers:
            return True
        if self.novel:
            return len(self.novel & words) >= MIN_WORDS
        return present(self.words, words)

    def still_in(self, words: set[str]) -> bool:
        return present(self.novel or self.words, words)


def identifying(text: str, indexes: SourceIndexes) -> Identity:
    """认得出这句话的东西（见 Identity）。"""
    reading = seen(text)
    words = set(claim_words(reading).distinct)
    known = [indexes(number) for number in range(1, len(indexes) + 1)]
    novel = {word for word in words if not any(word in index.postings for index in known)}
    numbers = {value for value in numbers_in(reading) if not any(value in index.quantities.values for index in known)}
    return Identity(novel, words, numbers)


def present(words: set[str], found: set[str]) -> bool:
    hits = len(words & found)
    return hits >= MIN_WORDS and hits >= SHARE * len(words)


def fates(old_answer: str, old_report: Report, new_answer: str, new_report: Report,
          indexes: SourceIndexes) -> list[Fate]:
    """改写前被标出的每一句在改写后的下落。新增的不核对的地方才算：改写前就有的标题、代码块不算把它藏起来。"""
    before = places_of(old_answer, old_report)
    after = places_of(new_answer, new_report)
    added_words = after.unchecked - before.unchecked
    added_numbers = after.unchecked_numbers - before.unchecked_numbers
    result = []
    for text in flagged_texts(old_answer, old_report):
        identity = identifying(text, indexes)
        result.append(Fate(text, identity.hidden_in(added_words, added_numbers), identity.still_in(after.flagged)))
    return result


def hiding_message(found: Sequence[Fate]) -> str | None:
    """改写把被标出的说法藏起来了时，说明是哪一句（不采用这个改写）；没有时 None。"""
    hidden = [fate for fate in found if fate.hidden]
    if not hidden:
        return None
    return (f"改写把被标出的“{quote(hidden[0].text)}”挪到了标题、代码块或太短不判的句子里（还有 {len(hidden) - 1} 句）"
            if len(hidden) > 1 else
            f"改写把被标出的“{quote(hidden[0].text)}”挪到了标题、代码块或太短不判的句子里，没有删掉也没有改对")


def really_fixed(found: Sequence[Fate]) -> int:
    """真的删掉了或者改对了的：内容既不在不核对的地方、也不在被标出的句子里。"""
    return sum(1 for fate in found if not fate.hidden and not fate.still_flagged)
