"""The lab beside the engine: experiments (schema, runner, summaries), metrics, run-log readers
and ``xfer report``.

It depends on the engine (``xfer``), the emulated WAN (``testbeds``) and ``policy``; none of
them imports it. ``train`` builds its evaluation on it. See docs/ARCHITECTURE.md.
"""
