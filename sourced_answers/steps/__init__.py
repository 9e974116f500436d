"""第 5 层：核对之后的几步——核对、修正、评判串起来（check_steps）、确定性修正（repair）、请模型改写（rewrite）、
第二意见（judge）。"""
