"""第 6 层：输出和记录的格式——--json 的记录、JSON Lines 的读法、终端里的结果、审阅页、整批的汇总、
聊天窗口里的样子。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
