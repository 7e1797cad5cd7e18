"""The SQLite export of CANN 8 / torch_npu 2.x: the timeline, the args of one event, counters,
summary tables and communication, read from the databases in place."""
