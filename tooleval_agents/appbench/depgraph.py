def scales(calls): return 1, 1.0
