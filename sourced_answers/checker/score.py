"""支持分：把 features.py 的特征组合成一个 0 到 1 之间的数，越大越可能“所引资料支持这句话”。

组合方式是逻辑回归：score = 1 / (1 + e^-(bias + Σ weight × (特征 - mean) / scale))。
有两份模型（两种“校准”），特征一样，权重、切点（cut）和评判模型的询问区间（judge_band）不一样，都在同一目录里：
  · 中文（CHINESE，support_model.json）：bench/fit_support_score.py 在 CiteCheck dev 上拟合，默认用它；
  · 英文（ENGLISH，support_model_en.json）：bench/fit_english_support.py 在 AttributionBench 的 dev 上拟合，
    只用在英文句子引英文资料的时候（calibration.py 决定用哪一份）。
两份都用 5 折交叉验证（固定的随机种子）拟合，不手改（tests/test_support_model.py、tests/test_english_support_model.py
重新拟合一遍并比较）。这里只读文件，推断是纯 Python。

中文的分数在 CiteCheck（中文网页上的问答）上校准：在那种数据上，分数 0.8 的句子大约八成有依据。英文的分数在
AttributionBench（英文问答和英文资料）上校准。换一种文字（别的领域）时，排序仍然有用，具体的概率不一定准。
"""
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MODEL_FILE = Path(__file__).with_name("support_model.json")
ENGLISH_MODEL_FILE = Path(__file__).with_name("support_model_en.json")
CHINESE = "zh"
ENGLISH = "en"
MODEL_FILES = {CHINESE: MODEL_FILE, ENGLISH: ENGLISH_MODEL_FILE}


@dataclass(frozen=True)
class SupportModel:
    """拟合好的支持分模型：特征名、标准化用的均值和尺度、权重、截距，以及在交叉验证上选出的两个数：
    cut（支持分低于它就标出 weak_support）和 judge_band（--judge 只问支持分落在这个区间里的句子）。"""
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    cut: float
    judge_band: tuple[float, float]

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> "SupportModel":
        def numbers(name: str) -> tuple[float, ...]:
            value = data[name]
            assert isinstance(value, list)
            return tuple(float(item) for item in value)
        features = data["features"]
        assert isinstance(features, list)
        low, high = numbers("judge_band")
        return cls(tuple(str(name) for name in features), numbers("mean"), numbers("scale"), numbers("weights"),
                   float(str(data["bias"])), float(str(data["cut"])), (low, high))

    def score(self, values: Mapping[str, float]) -> float:
        """一组特征值 → 支持分（0 到 1）。"""
        z = self.bias
        for name, mean, scale, weight in zip(self.features, self.mean, self.scale, self.weights, strict=True):
            z += weight * (values[name] - mean) / scale
        if z < -40:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))


@cache
def support_model(calibration: str = CHINESE) -> SupportModel:
    """随包发布的模型（每份只读一次）：calibration 是 CHINESE（默认）或 ENGLISH。"""
    return SupportModel.from_json(json.loads(MODEL_FILES[calibration].read_text(encoding="utf-8")))
