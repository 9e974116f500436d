"""第 7 层：整批的工作——--verify、--eval 和 Dask 任务。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
