"""第 6 层：输出和记录格式——--json 的记录（records）、JSON Lines 的读法（json_lines）、文字结果（render）、
审阅页（review_page、review_reasons）、整批的汇总（summary）。"""
