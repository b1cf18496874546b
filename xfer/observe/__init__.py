"""Observation: TCP_INFO and MPTCP counters (tcpinfo), the per-MI monitor, the interval
record, the run-log writer and the progress display. Imports nothing of xfer.tx or xfer.rx.
"""
