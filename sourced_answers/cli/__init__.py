"""第 10 层：命令行——main 和把回答写出去的 run_question（run）、参数（parser、arguments）、
参数和环境变量变成设置（config）、每个入口最外的一层（launch、command）、quickstart、Dask 任务和自带模型的命令。"""
