package api_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/records"
)

// sseMsg is one server-sent event or comment as read off the wire.
type sseMsg struct {
	event, data, comment string
}

// sseStream reads a text/event-stream response in a goroutine.
type sseStream struct {
	resp *http.Response
	msgs chan sseMsg
	err  chan error // the read error that ended the stream (io.EOF: clean end)
}

func openSSE(t *testing.T, url string) *sseStream {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	s := &sseStream{resp: resp, msgs: make(chan sseMsg, 1024), err: make(chan error, 1)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var m sseMsg
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m != (sseMsg{}) {
					s.msgs <- m
				}
				m = sseMsg{}
			case strings.HasPrefix(line, ":"):
				m.comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "event: "):
				m.event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				m.data += line[len("data: "):]
			}
		}
		err := sc.Err()
		if err == nil {
			err = io.EOF
		}
		s.err <- err
	}()
	return s
}

// next returns the next job event for which keep returns true, skipping
// others, or fails the test at the deadline.
func (s *sseStream) next(t *testing.T, timeout time.Duration, keep func(apiv1.Job) bool) apiv1.Job {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-s.msgs:
			if m.event != "job" {
				continue
			}
			var ev apiv1.Event
			if err := json.Unmarshal([]byte(m.data), &ev); err != nil {
				t.Fatalf("event data %q: %v", m.data, err)
			}
			if ev.Kind != "job" {
				t.Fatalf("event kind %q", ev.Kind)
			}
			if keep(ev.Job) {
				return ev.Job
			}
		case err := <-s.err:
			t.Fatalf("stream ended: %v", err)
		case <-deadline:
			t.Fatalf("no matching event within %s", timeout)
		}
	}
}

// ended waits for the stream to end cleanly.
func (s *sseStream) ended(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case <-s.msgs:
		case err := <-s.err:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stream ended with %v, want a clean end", err)
			}
			return
		case <-deadline:
			t.Fatalf("stream still open after %s", timeout)
		}
	}
}

// putJob writes a valid JobInfo record, as a submitting node does.
func putJob(t *testing.T, store interface {
	Put(ctx context.Context, key, recordType string, payload []byte) error
}, n byte) jobs.ID {
	t.Helper()
	addr, err := jobs.ParseAddress("0x00000000000000000000000000000000000000c1")
	if err != nil {
		t.Fatal(err)
	}
	j := &jobs.JobInfo{
		Code: jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data: jobs.Data{
			Source: jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("data"))},
			Size:   1000,
		},
		Slicing:        jobs.Slicing{BlockSize: 64, MicroJobs: 3, BlocksPerMicro: 3},
		SeedCommitment: sha256.Sum256([]byte{n}),
		PriceWei:       big.NewInt(1000),
		Creator:        addr,
		Deadline:       time.Now().Add(time.Hour).Unix(),
		Output:         jobs.Output{Kind: jobs.OutputConcat},
	}
	j.ApplyDefaults()
	if err := store.Put(context.Background(), records.JobKey(j.ID()), records.JobType, j.Encode()); err != nil {
		t.Fatal(err)
	}
	return j.ID()
}

// TestEventsStream checks the stream without a mesh: initial events, a
// new job's event, the ?job= filter, bad requests, the stream cap,
// heartbeats and the end of every stream when the store closes.
func TestEventsStream(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	store := c.Replicas[0].Store
	first := putJob(t, store, 1)

	cfg := api.DefaultEventsConfig()
	cfg.MaxStreams, cfg.MaxStreamsPerClient, cfg.MaxAnonymousStreams = 2, 2, 2
	cfg.Heartbeat = 20 * time.Millisecond
	cfg.Coalesce = 10 * time.Millisecond
	ev, err := api.NewEvents(&api.JobView{Store: store}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ev)
	defer srv.Close()

	all := openSSE(t, srv.URL)
	j := all.next(t, 10*time.Second, func(apiv1.Job) bool { return true })
	if j.ID != first.String() || j.State != apiv1.JobOpen || j.MicroJobs == 0 {
		t.Fatalf("initial event: %+v", j)
	}
	second := putJob(t, store, 2)
	one := openSSE(t, srv.URL+"?job="+second.String())
	all.next(t, 10*time.Second, func(j apiv1.Job) bool { return j.ID == second.String() })
	if got := one.next(t, 10*time.Second, func(apiv1.Job) bool { return true }); got.ID != second.String() {
		t.Fatalf("followed job %s, got an event for %s", second, got.ID)
	}
	// A third job is not sent to the stream that follows the second. The
	// hub hands an event to every stream before any of them writes it, so
	// once the other stream has it, the follower would write it before its
	// second heartbeat.
	third := putJob(t, store, 3)
	all.next(t, 10*time.Second, func(j apiv1.Job) bool { return j.ID == third.String() })
	deadline := time.After(10 * time.Second)
	for pings := 0; pings < 2; {
		select {
		case m := <-one.msgs:
			if m.event == "job" {
				t.Fatalf("the stream following %s got %s", second, m.data)
			}
			if m.comment == "ping" {
				pings++
			}
		case <-deadline:
			t.Fatal("no heartbeats")
		}
	}

	// Bad requests.
	for _, q := range []string{"?job=nope", "?job=" + strings.Repeat("g", 64), "?job="} {
		var e api.Error
		getJSON(t, srv.URL+q, http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, "job ID") {
			t.Fatalf("%s: %q", q, e.Error)
		}
	}
	var e api.Error
	getJSON(t, srv.URL, http.StatusTooManyRequests, &e)
	if !strings.Contains(e.Error, "too many event streams") {
		t.Fatalf("third stream: %q", e.Error)
	}

	// A client that goes away frees its slot.
	one.resp.Body.Close()
	wait.Until(t, 10*time.Second, func() error {
		if n := ev.Open(); n != 1 {
			return fmt.Errorf("%d streams open after a client left", n)
		}
		return nil
	})
	again := openSSE(t, srv.URL+"?job="+first.String())
	if got := again.next(t, 10*time.Second, func(apiv1.Job) bool { return true }); got.ID != first.String() {
		t.Fatalf("reconnected stream: %s", got.ID)
	}

	// The node shuts down: every stream ends.
	c.Stop(0)
	all.ended(t, 10*time.Second)
	again.ended(t, 10*time.Second)
}

// TestEventsEndOnServerShutdown: Shutdown ends open streams instead of
// waiting for them.
func TestEventsEndOnServerShutdown(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	putJob(t, c.Replicas[0].Store, 1)
	ev, err := api.NewEvents(&api.JobView{Store: c.Replicas[0].Store}, api.DefaultEventsConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.Listen("127.0.0.1:0", ev, api.DefaultConfig(), meshtest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	s := openSSE(t, fmt.Sprintf("http://%s/", srv.Addr()))
	s.next(t, 10*time.Second, func(apiv1.Job) bool { return true })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open stream: %v", err)
	}
	s.ended(t, 10*time.Second)
	if ev.Open() != 0 {
		t.Fatalf("%d streams still open", ev.Open())
	}
}

func TestEventsConfig(t *testing.T) {
	if err := api.DefaultEventsConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := api.DefaultEventsConfig()
	bad.MaxStreams = 0
	if _, err := api.NewEvents(&api.JobView{}, bad, nil); !errors.Is(err, api.ErrInvalidEventsConfig) {
		t.Fatalf("max streams 0: %v", err)
	}
	if _, err := api.NewEvents(&api.JobView{}, api.DefaultEventsConfig(), nil); !errors.Is(err, api.ErrInvalidEventsConfig) {
		t.Fatalf("no store: %v", err)
	}
}
