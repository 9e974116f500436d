"""怎样判断一句话有没有依据（--rule、--threshold）：规则的名字和原教程的阈值。设置、参数解析、帮助都要用它们，
所以它们单独放在这里：只导入支持分模型的类型，--help、--version 不为整个核对付启动的时间。"""
from dataclasses import dataclass

from sourced_answers.checker.score import SupportModel

# 原教程的规则：字二元组的重合比例不低于这个阈值才算有依据
TUTORIAL_THRESHOLD = 0.35
RULES = ("score", "tutorial")  # 第一个是默认的规则


@dataclass(frozen=True)
class SupportRule:
    """怎样判断一句话有没有依据（--rule、--threshold）。

    score（默认）：支持分不低于 threshold；threshold 为 None 时用这句话那一份模型（中文或英文，见 calibration.py）
    拟合时在交叉验证上选出的切点。给了 threshold 时两种句子都用它：两份的支持分都是各自数据上“有依据的概率”。
    tutorial：原教程的规则，句子的字二元组在所引资料里出现的比例不低于 threshold（默认 0.35）。"""
    name: str = RULES[0]
    threshold: float | None = None

    def limit(self, model: SupportModel) -> float:
        if self.threshold is not None:
            return self.threshold
        return model.cut if self.name == "score" else TUTORIAL_THRESHOLD


DEFAULT_RULE = SupportRule()
