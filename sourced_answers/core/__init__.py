"""第 2 层：每一层都用的基础，只依赖 checker 和标准库：错误和退出码（errors）、设置（settings）、
文字和遮密钥（text、secrets）、
安全的输出（safe_output）、写文件（output_files）、重试和总时限（retrying）、网络错误的中文原因（network）、问题的整理（questions）。"""
