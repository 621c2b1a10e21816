"""Second implementation of the jobmesh slicing spec v2 (docs/PROTOCOL.md),
written from the spec text alone. It recomputes every ID, block and verifier
choice in slice_vectors.json and fails on any difference.

    python3 jobs/testdata/slice_reference.py
"""
import json, hashlib, os, struct
g = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "slice_vectors.json")))
class Stream:
    def __init__(s, seed, m, tag=b"jobmesh/slice/v1"):
        s.prefix = tag + seed + struct.pack(">Q", m); s.c = 0; s.buf = b""
    def u64(s):
        if not s.buf:
            s.buf = hashlib.sha256(s.prefix + struct.pack(">Q", s.c)).digest(); s.c += 1
        v = struct.unpack(">Q", s.buf[:8])[0]; s.buf = s.buf[8:]; return v
    def uniform(s, n):
        t = (2**64) % n
        while True:
            x = s.u64()
            if x >= t: return x % n
def shuffle(r, a):
    for i in range(len(a)-1, 0, -1):
        j = r.uniform(i+1); a[i], a[j] = a[j], a[i]
st = g["stream"]; r = Stream(bytes.fromhex(st["seed"]), st["macro"])
assert ["%016x" % r.u64() for _ in range(8)] == st["words"]
r = Stream(bytes.fromhex(st["seed"]), st["macro"])
assert [r.uniform(10) for _ in range(8)] == st["uniform_10"]
for c in g["cases"]:
    job = json.loads(c["job"]); jid = hashlib.sha256(c["job"].encode()).digest()
    assert jid.hex() == c["job_id"]
    commit = bytes.fromhex(job["seed_commitment"]); secret = bytes.fromhex(c["secret"]); sl = job["slicing"]
    B, N, K, KV = sl["block_size"], sl["n"], sl["k"], sl["k_verifier"]
    nb = -(-job["data"]["size"] // B); nm = -(-nb // (N*K))
    assert nm == len(c["macros"])
    for m in range(nm):
        first = m*N*K; b = min(N*K, nb-first); nr = -(-b//K); kk = min(KV, nr)
        r = Stream(commit, m)
        P = list(range(first, first+b)); shuffle(r, P)
        reg = [sorted(P[i*K:min((i+1)*K, b)]) for i in range(nr)]
        q = Stream(secret, m, b"jobmesh/check/v1")
        C = list(range(nr)); shuffle(q, C)
        picks = []
        for cidx in C[:kk]:
            p = q.uniform(len(reg[cidx])); picks.append((reg[cidx][p], cidx, p))
        picks.sort()
        gm = c["macros"][m]
        assert gm["id"] == hashlib.sha256(b"jobmesh/macro/v1" + jid + struct.pack(">Q", m)).hexdigest()
        assert len(gm["micros"]) == nr + 1
        for s, mu in enumerate(gm["micros"]):
            if s < nr:
                assert not mu["verifier"] and mu["blocks"] == reg[s]
                assert mu["id"] == hashlib.sha256(b"jobmesh/micro/v1" + jid + commit + struct.pack(">QQ", m, s)).hexdigest()
            else:
                assert mu["verifier"] and mu["blocks"] == [p[0] for p in picks]
                assert [(x["slot"], x["position"]) for x in mu["sources"]] == [(ci, p) for _, ci, p in picks]
                assert mu["id"] == hashlib.sha256(b"jobmesh/micro/v1" + jid + secret + struct.pack(">QQ", m, s)).hexdigest()
    print("ok", c["name"])
