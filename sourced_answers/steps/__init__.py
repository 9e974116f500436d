"""第 5 层：核对之后的几步——核对、修正、评判串起来，确定性的修正，请模型改写，第二意见，没有写作模型时的摘录。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
