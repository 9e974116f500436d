"""第 3 层：资料从哪里来——秘塔的客户端和本地缓存、搜索加读取、挑段落，以及 --demo 的演示服务。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
