"""--fix 替一句话挑资料：哪条资料能让它完全通过核对（支持分、数字、语言，和核对是同一条规则），
而且它差不多是照着那条资料写的。确定性修正（repair.py）和它的性质测试都用这里。纯逻辑。"""
from collections.abc import Sequence
from dataclasses import dataclass

from sourced_answers.checker import (
    Claim,
    Source,
    SourceIndexes,
    SupportRule,
    check_claim,
    claim_words,
    read_claim,
    support_of,
    too_short,
)

# 修正比核对更严：核对只数内容词，“NAS 不需要任何备份，RAID 就够了”对一页讲 RAID 的资料有 75% 的内容词重合。
# 替一句话选来源时还要求它的全部二元组（连“不需”“任何”这样的虚词也算）在资料最相关的几句里至少出现这么多，
# 也就是这句话差不多是照着这条资料写的。这个值在 evaluate_fix.py 的调参一半上选出，另一半上报告。
REPAIR_COVERAGE = 0.8


@dataclass(frozen=True)
class Fit:
    """一句话引某几条资料时的支持分和重合度（所引的编号都不存在、或者句子和资料不是同一种语言时是 None）。"""
    score: float | None
    overlap: float | None


class Sources:
    """替句子找资料：用和核对同一个支持分（同一条 rule），每条资料的索引只建一次。"""

    def __init__(self, sources: Sequence[Source], rule: SupportRule, coverage_needed: float = REPAIR_COVERAGE,
                 indexes: SourceIndexes | None = None) -> None:
        self.sources = sources
        self.rule = rule
        self.coverage_needed = coverage_needed
        self.index_of = indexes or SourceIndexes(sources)

    def passing(self, claim: Claim, numbers: Sequence[int]) -> Fit | None:
        """claim 改引 numbers 时能否完全通过（支持分、数字、语言）而且差不多是照着资料写的；能时返回 Fit，否则 None。
        太短的句子不判支持分，谁都“通过”，所以不替它们找来源。"""
        if too_short(read_claim(claim.body).text) or not numbers:
            return None
        check, problem = check_claim(Claim(claim.paragraph, claim.text, claim.body, list(numbers)), self.sources,
                                     self.index_of, self.rule)
        if problem is not None:
            return None
        if max(self.coverage(claim, n) for n in numbers) < self.coverage_needed:
            return None
        return Fit(check.score, check.overlap)

    def coverage(self, claim: Claim, number: int) -> float:
        """句子的全部词（含虚词组成的二元组）有多少出现在资料最相关的连续几句里。"""
        key = ("coverage", claim.body, number)
        if key not in self.index_of.memo:
            tokens = claim_words(read_claim(claim.body).text).all_distinct
            hits = self.index_of(number).best_window(tokens)[0] if tokens else 0
            self.index_of.memo[key] = hits / len(tokens) if tokens else 0.0
        found: float = self.index_of.memo[key]
        return found

    def best(self, claim: Claim) -> tuple[int, Fit] | None:
        """能让这句话完全通过的资料里支持分最高的一条：(编号, Fit)；没有时为 None。同样的句子只找一次。"""
        key = ("best source", claim.body, self.rule, self.coverage_needed)
        if key not in self.index_of.memo:
            self.index_of.memo[key] = self.find_best(claim)
        best: tuple[int, Fit] | None = self.index_of.memo[key]
        return best

    def find_best(self, claim: Claim) -> tuple[int, Fit] | None:
        """能让它通过的资料里，句子的字对上得最多的一条（对齐，alignment.py）；一样多时支持分高的。"""
        found: tuple[tuple[int, float], int, Fit] | None = None
        reading = read_claim(claim.body)
        words = claim_words(reading.text)
        for number in self.index_of.candidates(words.distinct):
            fit = self.passing(claim, [number])
            if fit is None:
                continue
            rank = (support_of(reading, words, number, self.index_of).alignment.matched, fit.score or 0.0)
            if found is None or rank > found[0]:
                found = (rank, number, fit)
        return (found[1], found[2]) if found else None

    def fit(self, claim: Claim, numbers: Sequence[int]) -> Fit:
        """句子引着这几条资料（不存在的编号不算）时的支持分和重合度。"""
        valid = list(dict.fromkeys(n for n in numbers if 1 <= n <= len(self.sources)))
        if not valid:
            return Fit(None, None)
        check, _ = check_claim(Claim(claim.paragraph, claim.text, claim.body, valid), self.sources, self.index_of,
                               self.rule)
        return Fit(check.score, check.overlap)
