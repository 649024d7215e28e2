"""How infoppo keeps records on disk: JSONL files (read line by line, or kept as append-only logs with one
torn-line policy), standard JSON text every reader accepts (:mod:`infoppo_cli.records.text`) and the one
timestamp format of everything it writes."""

from infoppo_cli.records.jsonl import JsonlLine, JsonlLog, iter_jsonl
from infoppo_cli.records.timestamp import utc_timestamp

__all__ = ["JsonlLine", "JsonlLog", "iter_jsonl", "utc_timestamp"]
