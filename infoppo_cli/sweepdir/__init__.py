"""A sweep directory's record, below ``report/`` (which reads it) and ``sweep/`` (which writes it): the sweep
kinds (``kinds.py``: what each varies, its values parsed, checked, written and labelled) and the shape of
``sweep.json`` (``schema.py``)."""
