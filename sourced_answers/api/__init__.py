"""第 8 层：Python API——回答一个问题、核对一个保存下来的回答，都返回 --json 的那条记录。

命令行和两个服务（OpenAI 兼容的 --serve、MCP 的 --mcp）都是它上面薄薄的一层，不自己重写任何一步。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
