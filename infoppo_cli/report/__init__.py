"""Reports: reading run directories, the paper's figures and the table of final metrics."""
