"""第 10 层：命令行——解析参数、问一个问题并把回答写出去、每个入口最外的一层，
以及 quickstart.sh 背后的命令、Dask 任务和自带模型的命令。
每个模块做什么见 docs/development.md 的模块地图（tests/test_architecture.py 检查它和目录一一对应）。"""
