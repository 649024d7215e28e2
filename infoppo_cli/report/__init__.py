"""Reports: reading run directories, InfoPPO's figures and the table of final metrics."""
