"""``infoppo inspect``: the information clock of a model on real responses.

``responses`` reads the input file, ``entropy`` runs the teacher-forced forward (resumable through
``store``), ``clock`` turns entropies into rho, Gamma_info and clip bounds with ``infoppo_cli.infotime``,
``tokens`` aggregates them (tokens.parquet, InfoPPO's Figure 2 table, summary.json), ``figures``
draws the PNG, ``page`` writes the self-contained HTML page and ``run`` ties them together.
"""
