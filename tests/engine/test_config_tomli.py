"""Python 3.10 has no `tomllib`: the config loader falls back to `tomli` (a dependency below 3.11). The
fallback runs in a fresh interpreter in which `import tomllib` fails, so no module state leaks into other
tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_TOMLLIB = textwrap.dedent(
    """
    import json, sys
    sys.modules["tomllib"] = None  # what Python 3.10 looks like: the import raises ModuleNotFoundError
    import amnesia.config as config
    from amnesia.errors import InvalidInput
    loaded = config.Config.from_file(sys.argv[1])
    try:
        config.Config.from_file(sys.argv[2])
        refusal = None
    except InvalidInput as error:
        refusal = str(error)
    print(json.dumps({"parser": config.tomllib.__name__, "ttl": loaded.default_ttl,
                      "restorable": loaded.restorable, "refusal": refusal}))
    """
)


def test_toml_configs_load_through_tomli_when_tomllib_is_missing(tmp_path: Path) -> None:
    good, bad = tmp_path / "amnesia.toml", tmp_path / "broken.toml"
    good.write_text('[amnesia]\ndefault_ttl = "7d"\nrestorable = true\n', encoding="utf-8")
    bad.write_text('default_ttl = "7d\n', encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_TOMLLIB, str(good), str(bad)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["parser"] == "tomli"
    assert (outcome["ttl"], outcome["restorable"]) == (7 * 86_400, True)
    assert outcome["refusal"].startswith(f"{bad}: invalid TOML: ") and "\n" not in outcome["refusal"]
