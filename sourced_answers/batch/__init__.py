"""第 7 层：整批的工作——--verify（verification、workers）、--eval（evaluation）、
Dask 任务（dask_job、dask_scheduler）。"""
