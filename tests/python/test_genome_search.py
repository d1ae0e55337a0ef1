"""examples/genome_search: the encrypted search returns exactly the plaintext search's ids (several
matches, one, none; one and several reply ciphertexts; query sizes 1 to 8), the parties exchange
bytes only, the time breakdown adds up, and bad input is refused with a clear error."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import oboro

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "genome_search"))

import genome_search  # noqa: E402
from genome_client import Client  # noqa: E402
from genome_db import Layout, one_hot_blocks, parse_query, plaintext_search, query_vector, synthetic_database  # noqa: E402
from genome_server import MAX_QUERY_SIZE, Server  # noqa: E402
from op_timer import KINDS, OpTimer  # noqa: E402

SNPS = 8  # 24 one-hot slots -> blocks of 32, 256 records per ciphertext at N = 2^14


@pytest.fixture(scope="module")
def client():
    return Client(SNPS)  # keys once for the module: the slow part


def search(client, db, query):
    """The protocol, bytes only: (found ids, server's OpTimer, reply count)."""
    timer = OpTimer()
    server = Server(db, timer)
    server.receive_context(client.public_context())
    replies = server.answer(len(query), client.encrypt_query(query))
    assert all(isinstance(r, bytes) for r in replies)
    return client.matching_ids(replies, len(db), len(query)), timer, len(replies)


def test_layout_places_every_record_in_a_slot_of_its_own():
    lay = Layout(snps=SNPS, slots=8192)
    assert (lay.block, lay.per_ciphertext) == (32, 256)
    records = np.arange(40 * lay.per_ciphertext)  # 40 ciphertexts: two groups of up to 32
    group, slot = lay.response_slot(records)
    assert group.max() == 1 and len(set(zip(group.tolist(), slot.tolist()))) == len(records)
    assert slot.min() >= 0 and slot.max() < lay.slots


def test_one_hot_inner_product_counts_agreeing_positions():
    db = synthetic_database(300, SNPS, seed=1)
    lay = Layout(SNPS, 8192)
    query = {0: int(db[5, 0]), 3: int(db[5, 3]), 7: 2}
    rows = one_hot_blocks(db, lay)
    scores = (rows * query_vector(query, lay)).reshape(-1, lay.block).sum(axis=1)[: len(db)]
    want = sum((db[:, p] == g).astype(int) for p, g in query.items())
    assert np.array_equal(scores, want)


def test_several_matches_against_plaintext_search(client):
    db = synthetic_database(1000, SNPS, seed=2)
    query = {1: int(db[10, 1]), 4: int(db[10, 4]), 6: int(db[10, 6])}
    db[[20, 500, 999], :] = db[10]  # planted copies, in both database ciphertexts
    found, timer, replies = search(client, db, query)
    want = plaintext_search(db, query)
    assert len(want) >= 4 and {10, 20, 500, 999} <= set(want.tolist())
    assert np.array_equal(found, want) and replies == 1
    assert client.margin < 1e-3  # indicators within 1e-3 of 0 or 1: far from the 0.5 threshold
    # paper 002's breakdown: every kind timed; 4 ciphertexts -> 4 block sums + 3 merge rotations
    assert set(timer.seconds) == set(KINDS) and timer.calls["rotation"] == 4 + 3
    assert timer.calls["multiply"] == 4 + 4 + 2 and all(s > 0 for s in timer.seconds.values())
    assert math.isclose(sum(r[3] for r in timer.rows()), 1.0)


def test_no_match(client):
    db = synthetic_database(600, SNPS, seed=3)
    db[:, 2] = np.minimum(db[:, 2], 1)  # nobody has genotype 2 at position 2
    query = {2: 2, 5: int(db[0, 5])}
    assert len(plaintext_search(db, query)) == 0
    found, _, _ = search(client, db, query)
    assert len(found) == 0 and client.margin < 1e-3


def test_single_match_with_the_largest_query(client):
    db = synthetic_database(700, SNPS, seed=4)
    db[:, :] = np.where(db == 2, 1, db)  # no 2 anywhere ...
    db[123, :] = 2  # ... except record 123
    query = {p: 2 for p in range(MAX_QUERY_SIZE)}
    found, _, _ = search(client, db, query)
    assert found.tolist() == [123] and client.margin < 1e-3


def test_query_of_one_position(client):
    db = synthetic_database(400, SNPS, seed=5)
    query = {7: 1}
    found, timer, _ = search(client, db, query)
    assert np.array_equal(found, plaintext_search(db, query)) and len(found) > 0
    assert timer.calls["multiply"] == 2 + 2  # no product tree for m = 1


def test_many_reply_ciphertexts():
    # 2 SNPs: blocks of 8, 1024 records per ciphertext; 9000 records -> 9 ciphertexts -> 2 groups of up to 8
    client = Client(2)
    db = synthetic_database(9000, 2, seed=6)
    query = {0: 1, 1: 2}
    found, _, replies = search(client, db, query)
    assert replies == 2 and np.array_equal(found, plaintext_search(db, query)) and len(found) > 10


def test_server_sees_no_secret_key(client):
    server = Server(synthetic_database(10, SNPS, seed=7))
    server.receive_context(client.public_context())
    assert not server.ctx.has_secret_key and server.ctx.has_relin_key
    with pytest.raises(ValueError, match="secret key"):
        server.receive_context(client.ctx.serialize(secret_key=True))
    with pytest.raises(oboro.SerializationError):
        server.answer(2, b"not a ciphertext")


def test_bad_input_is_refused(client):
    server = Server(synthetic_database(10, SNPS, seed=8))
    with pytest.raises(ValueError, match="no context"):
        server.answer(1, b"")
    server.receive_context(client.public_context())
    with pytest.raises(ValueError, match="query size must be 1..8"):
        server.answer(9, client.encrypt_query({0: 1}))
    with pytest.raises(ValueError, match="position 9 is not in"):
        client.encrypt_query({9: 1})
    small = oboro.Context(log_n=14, moduli_bits=[60, 40, 40], special_bits=[60])
    small.keygen()
    with pytest.raises(ValueError, match="needs 5 levels"):
        server.receive_context(small.serialize())
    with pytest.raises(ValueError, match="need 256 slots per record"):
        Layout(snps=80, slots=128).check()
    for text, msg in [("3", "not POSITION:GENOTYPE"), ("3:3", "genotype in 0..2"), ("8:0", r"position must be in \[0, 8\)"),
                      ("1:0,1:1", "queried twice")]:
        with pytest.raises(ValueError, match=msg):
            parse_query(text, SNPS)
    with pytest.raises(ValueError, match="at least one record"):
        synthetic_database(0, SNPS, seed=1)
    with pytest.raises(ValueError, match="unknown op kind"):
        with OpTimer()("bootstrap"):
            pass


def test_command_line_writes_json_and_markdown(tmp_path, capsys):
    rc = genome_search.main(["--records", "1000", "--snps", str(SNPS), "--query-size", "5", "--no-progress",
                             "--json", str(tmp_path / "g.json"), "--markdown", str(tmp_path / "g.md")])
    assert rc == 0
    rep = json.loads((tmp_path / "g.json").read_text())
    assert rep["correct"] and rep["found"] == rep["expected"] and len(rep["found"]) >= rep["planted"] == 3
    assert len(rep["query"]) == 5 and rep["records"] == 1000 and rep["machine"]["date_utc"] and rep["load_average"]["end"] >= 0
    assert rep["bytes"]["public context"] > rep["bytes"]["query"] > 0 and rep["peak_rss_bytes"] > 0
    md = (tmp_path / "g.md").read_text()
    assert "| rotation |" in md and "| **end to end** |" in md and "the same as the plaintext search" in md
    assert md.strip() in capsys.readouterr().out
    assert genome_search.main(["--query", "0:5", "--snps", str(SNPS), "--no-progress"]) == 2
    assert "genotype in 0..2" in capsys.readouterr().err
