"""第 8 层：Python API——回答一个问题、核对一个保存下来的回答，都返回 --json 的那条记录。

给别的 Python 程序用的两个函数在这一层（public）；用户给的值（命令行的参数或 API 的关键字）加上环境变量变成设置
也在这一层（config），每道门走同一处。命令行和两个服务（OpenAI 兼容的 --serve、MCP 的 --mcp）都是它上面薄薄的
一层，不自己重写任何一步。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
