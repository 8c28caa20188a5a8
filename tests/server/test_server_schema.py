"""Schemathesis generates requests from /openapi.json: the server never answers 5xx, and its
answers match the document (status codes, content types, bodies)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import reference_server as ref


def test_openapi_document_holds(tmp_path: Path) -> None:
    # High limits: the fuzzer sends far more requests than the anonymous default allows.
    with ref.start(tmp_path, rate_limit=10**6, anonymous_rate_limit=10**6) as server:
        st = Path(sys.executable).with_name("st")
        result = subprocess.run(
            [
                str(st),
                "run",
                f"{server.url}/openapi.json",
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,"
                "response_schema_conformance",
                "--header",
                f"Authorization: Bearer {ref.PERSONAL_TOKEN}",
                "--max-examples",
                "40",
                "--seed",
                "1",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,  # its cache stays out of the work tree
            env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
        )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
