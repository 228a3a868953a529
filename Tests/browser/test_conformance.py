"""herald.js against every conformance vector (Tests/conformance/vectors/*.json), in headless Chromium.

Each vector runs in the page through Tests/conformance/runner.js with the ES-module wrapping of
herald.js, as Herald serves it; the runner lists every step whose expectation did not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_helpers import wait

VECTORS = sorted((Path(__file__).resolve().parents[1] / "conformance" / "vectors").glob("*.json"))


def test_there_are_vectors():
    assert len(VECTORS) >= 5, "Tests/conformance/vectors/ should hold the shared vectors"


@pytest.mark.parametrize("vector_path", VECTORS, ids=[path.stem for path in VECTORS])
def test_vector(driver, herald_js_site, vector_path: Path):
    vector = json.loads(vector_path.read_text())
    if driver.current_url != herald_js_site.url("/conformance.html"):
        driver.get(herald_js_site.url("/conformance.html"))
        wait(driver).until(lambda d: d.execute_script("return window.conformanceReady === true"))
    driver.set_script_timeout(30)
    result = driver.execute_async_script(
        """
        const [vector, done] = arguments;
        window.runVector(vector).then(done, (error) => done({error: String(error && error.stack || error)}));
        """,
        vector,
    )
    assert "error" not in result, result.get("error")
    failures = result["failures"]
    assert failures == [], f"{vector['name']}:\n" + "\n".join(
        f"  step {failure['step']}: {failure['field']}: expected {json.dumps(failure['expected'], ensure_ascii=False)}, "
        f"got {json.dumps(failure['actual'], ensure_ascii=False)}"
        for failure in failures
    )
