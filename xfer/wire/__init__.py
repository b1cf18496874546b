"""The wire core, sans-IO: frame codecs, the session table, scheduler and book, the two
connection objects, the crypto and their events. Bytes and the time in, events and bytes out; no
socket, no event loop, no thread, no clock (tests/unit/test_layers.py checks it). Imports nothing
of xfer.tx, xfer.rx or xfer.observe.
"""
