"""The receive side: the accept loop (receiver), one session's control side (rxsession),
the data path (rxstream) and the store. Built on xfer.wire; never imports xfer.tx.
"""
