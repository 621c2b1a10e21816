package finish

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/libp2p/go-libp2p/core/peer"
)

// FuzzOpenRequest: opening any dispute, check or redo record never
// panics, and what it keeps is within the size limit, under a key that
// ends with its author, where its content says it belongs.
func FuzzOpenRequest(f *testing.F) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	author := peer.ID("author")
	me := author.String()
	micro := jobs.ID(sha256.Sum256([]byte("micro")))
	f.Add(byte(0), records.DisputeKey(id, 3, me), []byte(`{"dispute":{"macro":0,"block":3,"micros":["a","b"],"processors":["p","q"],"hashes":["",""]},"third":"r"}`))
	f.Add(byte(1), records.CheckKey(id, 3, me), []byte(`{"block":3,"processor":"p","hash":"00","thirds":["q","r"]}`))
	f.Add(byte(2), records.RedoKey(id, micro, me), []byte(`{"micro":"`+micro.String()+`","exclude":["p"]}`))
	f.Add(byte(0), records.DisputeKey(id, 3, "other"), []byte(`{"dispute":{"block":3},"third":"r"}`))
	types := []string{records.DisputeType, records.CheckType, records.RedoType}
	f.Fuzz(func(t *testing.T, typ byte, key string, payload []byte) {
		q := openRequest(id, crdt.Record{Key: key, Type: types[int(typ)%len(types)], Payload: payload, Author: author})
		if q == nil {
			return
		}
		if len(payload) > records.MaxRecord {
			t.Fatalf("kept a %d-byte record", len(payload))
		}
		if !strings.HasSuffix(key, "/"+me) || q.Author != me {
			t.Fatalf("kept a record under %q, author %q", key, q.Author)
		}
		if (q.Dispute != nil) == (q.Check != nil) && q.Redo == nil || q.Kind() != types[int(typ)%len(types)] {
			t.Fatalf("opened as %s: %+v", q.Kind(), q)
		}
	})
}
