"""The tests run against a live nds server that the node test (test/clients/python-client.test.ts) starts and fills:
NDS_TEST_URL, NDS_TEST_DATASET (public), NDS_TEST_PRIVATE_DATASET and NDS_TEST_KEY (its owner's key), and
NDS_TEST_SOURCES, a JSON object from each recording's BIDS path to the source file it was converted from."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


@pytest.fixture(scope="session")
def server():
    url = os.environ.get("NDS_TEST_URL")
    if not url:
        pytest.skip("NDS_TEST_URL is not set: run through test/clients/python-client.test.ts")
    return {
        "url": url,
        "dataset": os.environ["NDS_TEST_DATASET"],
        "private_dataset": os.environ["NDS_TEST_PRIVATE_DATASET"],
        "key": os.environ["NDS_TEST_KEY"],
        "sources": json.loads(os.environ["NDS_TEST_SOURCES"]),
    }
