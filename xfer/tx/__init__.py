"""The send side: the MI loop (sender), the control connection (txsession), the stream pool
and its data sources, the decider thread. Built on xfer.wire; never imports xfer.rx.
"""
