#!/usr/bin/env python3
"""Compact mwtokenizer 0.2.0's `dict_abbr_filtered.json` into `assets/abbreviations.tsv`.

    python3 tools/gen_abbreviations.py path/to/mwtokenizer/assets/dict_abbr_filtered.json

One line per wiki key (sorted): the key, then its abbreviations in the JSON's
order, tab-separated.  The JSON comes from the MIT-licensed `mwtokenizer==0.2.0`
sdist on PyPI (sha256 of the JSON checked below).
"""

import hashlib
import json
import sys

SHA256 = "4dd3b56bff647fce5fee1eb11005e68f6648bf0b6fb1e5cac7666463b157869f"

raw = open(sys.argv[1], "rb").read()
if hashlib.sha256(raw).hexdigest() != SHA256:
    sys.exit("unexpected dict_abbr_filtered.json (sha256 mismatch)")
data = json.loads(raw)
with open("assets/abbreviations.tsv", "w", encoding="utf-8", newline="\n") as out:
    for key in sorted(data):
        words = data[key]
        for w in [key, *words]:
            if not w or any(ch in w for ch in "\t\n\r"):
                sys.exit(f"cannot encode {w!r}")
        out.write("\t".join([key, *words]) + "\n")
