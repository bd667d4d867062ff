"""The open-notebook profile's readings of what seed 004 leaves open, as units: the checksum
encodings it accepts and the plain-result error envelope it reads as a failure."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from contract_tests.open_notebook.common import as_failure
from contract_tests.open_notebook.test_data_integrity import digest_of
from contract_tests.verdicts.checks import called_ok

DIGEST = hashlib.sha256(b"kelp").digest()


@pytest.mark.parametrize("encoded", [
    DIGEST.hex(), DIGEST.hex().upper(), "sha256:" + DIGEST.hex(), "SHA256:" + DIGEST.hex().upper(),
    "sha-256:" + DIGEST.hex(), base64.b64encode(DIGEST).decode(), base64.urlsafe_b64encode(DIGEST).decode().rstrip("="),
    "sha256-" + base64.b64encode(DIGEST).decode()])
def test_a_sha256_digest_is_read_in_every_common_encoding(encoded):
    assert digest_of(encoded) == DIGEST


@pytest.mark.parametrize("encoded", ["", "md5:" + DIGEST.hex(), DIGEST.hex()[:-2], "not a checksum", None, 42,
                                     base64.b64encode(DIGEST[:16]).decode()])
def test_what_is_not_a_sha256_digest_is_not_read_as_one(encoded):
    assert digest_of(encoded) is None


def _result(document, **extra):
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": json.dumps(document)}], **extra}}


def test_a_plain_result_that_is_exactly_the_error_envelope_is_a_failure():
    envelope = {"error": {"type": "source_not_found", "message": "No such source."}}
    assert not called_ok(as_failure(_result(envelope)))
    assert not called_ok(as_failure(_result(envelope, structuredContent=envelope)))


@pytest.mark.parametrize("document", [
    {"error": {"type": "source_not_found"}, "source_id": "x"},  # more than the envelope: a result
    {"error": "text"}, {"results": []}, ["error"]])
def test_a_result_that_is_not_exactly_the_envelope_stays_a_result(document):
    assert called_ok(as_failure(_result(document)))
