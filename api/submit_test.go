package api_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
)

// walletClient starts one more client node on the mesh, with a wallet key
// and no chain: a daemon started from a repo without [chain] is like it.
func walletClient(t *testing.T, m *localmesh.Mesh, tune func(*node.Config)) (*node.Node, *ecdsa.PrivateKey) {
	t.Helper()
	id, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	wallet, err := ethcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	cfg := node.DefaultConfig()
	localmesh.FastStore(&cfg)
	if tune != nil {
		tune(&cfg)
	}
	pc := p2p.LoopbackConfig()
	pc.Bootstrap = m.BootstrapAddrs()
	n, err := node.New(context.Background(), node.Params{
		Role: node.RoleClient, Config: cfg, Identity: id, WalletKey: wallet,
		Datastore: dssync.MutexWrap(ds.NewMapDatastore()), P2P: &pc, Logger: meshtest.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, wallet
}

// fastProcessors hurries a test mesh's processors.
var fastProcessors = localmesh.Timers{Poll: 200 * time.Millisecond, DiscloseGrace: 2 * time.Second}

func wordcount(t *testing.T) []byte {
	t.Helper()
	code, err := examples.Build(context.Background(), "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	return code
}

var text = []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 10))

func apiStatus(t *testing.T, err error) int {
	t.Helper()
	var e *meshclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an API error: %v", err)
	}
	return e.Status
}

// TestSubmitUploadWaitCancel drives a node without a chain through the
// SDK: upload, submit by URI without hashes, follow a job to its verdict,
// cancel an open job, refuse to cancel a started one or another node's.
func TestSubmitUploadWaitCancel(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 2, Timers: fastProcessors})
	n, wallet := walletClient(t, m, nil)
	srv, c := serve(t, n)
	c.Poll = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	code, err := c.Upload(ctx, bytes.NewReader(wordcount(t)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Upload(ctx, bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if data.Size != uint64(len(text)) || data.URI != "ipfs://"+data.CID || len(data.SHA256) != 64 {
		t.Fatalf("upload answer %+v", data)
	}

	// A job no processor can take (1 TiB of VRAM) stays open: cancel it.
	req := apiv1.SubmitRequest{
		Code: apiv1.Source{URI: code.URI}, Data: apiv1.Source{URI: data.URI},
		Slicing: apiv1.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 1}, PriceWei: "1000",
		Requirements: apiv1.Requirements{MinVRAMMiB: 1 << 20},
	}
	open, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	creator := strings.ToLower(ethcrypto.PubkeyToAddress(wallet.PublicKey).Hex())
	if open.State != apiv1.JobOpen || !open.Mine || open.Creator != creator || open.CodeURI != code.URI || open.DataSize != data.Size {
		t.Fatalf("submitted job %+v", open)
	}
	if time.Until(open.Deadline) < 59*time.Minute {
		t.Fatalf("default deadline %v", open.Deadline)
	}
	checkCancel(ctx, t, m, c, open.ID)

	// A job processors take runs to its verdict; Wait reports progress.
	req.Requirements = apiv1.Requirements{}
	req.Data.SHA256 = data.SHA256
	job, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var seen []apiv1.JobState
	final, err := c.Wait(ctx, job.ID, func(j apiv1.Job) {
		if len(seen) == 0 || seen[len(seen)-1] != j.State {
			seen = append(seen, j.State)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if final.State != apiv1.JobVerified || !final.Verified || final.OutputCID == "" || seen[len(seen)-1] != apiv1.JobVerified {
		t.Fatalf("final %+v, states %v", final, seen)
	}
	checkOutputHeld(ctx, t, n, final.OutputCID)
	if _, err := c.Cancel(ctx, job.ID); apiStatus(t, err) != http.StatusConflict {
		t.Fatalf("cancel after work started: %v", err)
	}
	list, err := c.Jobs(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("jobs: %v, %d", err, len(list))
	}
	// The verified job is no longer announced once the client notices its
	// verdict (on its next re-announcement).
	wait.Until(t, 30*time.Second, func() error {
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			return err
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{"jobmesh_dapp_jobs_submitted_total 2", "jobmesh_dapp_jobs_cancelled_total 1", "jobmesh_dapp_jobs_open 0"} {
			if !strings.Contains(string(metrics), want) {
				return fmt.Errorf("/metrics lacks %q", want)
			}
		}
		return nil
	})
}

// checkCancel cancels open job id through c, the API of the node that
// submitted it, after another node's API refused to, and waits until every
// node sees it cancelled.
func checkCancel(ctx context.Context, t *testing.T, m *localmesh.Mesh, c *meshclient.Client, id string) {
	t.Helper()
	_, other := serve(t, m.Bootstrap().Node)
	_, proc := serve(t, m.Members[1].Node)
	wait.Until(t, 30*time.Second, func() error {
		_, err := proc.Job(ctx, id)
		return err
	})
	if _, err := proc.Cancel(ctx, id); apiStatus(t, err) != http.StatusForbidden {
		t.Fatalf("cancel from another node: %v", err)
	}
	got, err := c.Cancel(ctx, id)
	if err != nil || got.State != apiv1.JobCancelled {
		t.Fatalf("cancel: %v, %+v", err, got)
	}
	if again, err := c.Cancel(ctx, id); err != nil || again.State != apiv1.JobCancelled {
		t.Fatalf("cancel again: %v, %+v", err, again)
	}
	// Every node sees it cancelled: the record is signed by the creator.
	wait.Until(t, 30*time.Second, func() error {
		j, err := other.Job(ctx, id)
		if err != nil {
			return err
		}
		if j.State != apiv1.JobCancelled {
			return fmt.Errorf("bootstrap sees %s", j.State)
		}
		return nil
	})
}

// checkOutputHeld checks that the output of CID outputCID is in n's block
// layer, with its output.bin.
func checkOutputHeld(ctx context.Context, t *testing.T, n *node.Node, outputCID string) {
	t.Helper()
	oc, err := cid.Decode(outputCID)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := n.IPFS.Get(ctx, oc, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if out, err := os.ReadFile(filepath.Join(dir, "out", "output.bin")); err != nil || len(out) == 0 {
		t.Fatalf("output: %d bytes (%v)", len(out), err)
	}
}

type badCase struct {
	name        string
	method, url string
	contentType string
	body        []byte
	status      int
	msg         string
}

// TestSubmitRefusesBadRequests: each kind of bad request gets its status
// and a JSON error naming the problem, and publishes nothing.
func TestSubmitRefusesBadRequests(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	n, _ := walletClient(t, m, func(c *node.Config) { c.API.MaxUploadMiB = 4 })
	srv, c := serve(t, n)
	boot, bootClient := serve(t, m.Bootstrap().Node)
	ctx := context.Background()
	code, err := c.Upload(ctx, bytes.NewReader(wordcount(t)))
	if err != nil {
		t.Fatal(err)
	}
	good := func(edit func(map[string]any)) []byte {
		r := map[string]any{
			"code":      map[string]any{"uri": code.URI, "sha256": code.SHA256},
			"data":      map[string]any{"uri": code.URI},
			"slicing":   map[string]any{"block_size": 4096},
			"price_wei": "1000",
		}
		if edit != nil {
			edit(r)
		}
		b, _ := json.Marshal(r)
		return b
	}
	idPath := "/v1/jobs/" + strings.Repeat("ab", 32)
	const js, bin = "application/json", "application/octet-stream"
	cases := []badCase{
		{"wrong method", "PUT", "/v1/jobs", js, good(nil), 405, "method not allowed"},
		{"wrong method on cancel", "GET", idPath + "/cancel", "", nil, 405, "allowed: POST"},
		{"unknown path", "GET", "/v1/nothing", "", nil, 404, "no such endpoint"},
		{"malformed JSON", "POST", "/v1/jobs", js, []byte(`{"code":`), 400, "malformed"},
		{"unknown field", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["colour"] = "red" }), 400, "colour"},
		{"trailing data", "POST", "/v1/jobs", js, append(good(nil), []byte(`{}`)...), 400, "after the value"},
		{"oversized body", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["output"] = strings.Repeat("x", api.MaxSubmitBody) }), 413, "too large"},
		{"wrong content type", "POST", "/v1/jobs", "text/plain", good(nil), 415, "Content-Type"},
		{"missing price", "POST", "/v1/jobs", js, good(func(r map[string]any) { delete(r, "price_wei") }), 400, "price_wei: missing"},
		{"bad price", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["price_wei"] = "-5" }), 400, "price_wei"},
		{"bad URI", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["code"] = map[string]any{"uri": "ftp://example.com/x"} }), 400, "code.uri"},
		{"several bad fields", "POST", "/v1/jobs", js, good(func(r map[string]any) {
			r["data"] = map[string]any{"uri": "nonsense"}
			r["slicing"] = map[string]any{"block_size": 0}
			r["output"] = "gif"
		}), 400, "data.uri"},
		{"bad hash", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["code"] = map[string]any{"uri": code.URI, "sha256": "XYZ"} }), 400, "code.sha256"},
		{"past deadline", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["deadline"] = "2020-01-01T00:00:00Z" }), 400, "deadline"},
		{"png-grid without columns", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["output"] = "png-grid" }), 400, "columns"},
		{"bad slicing", "POST", "/v1/jobs", js, good(func(r map[string]any) {
			r["slicing"] = map[string]any{"block_size": 4096, "microjobs": 2, "verifier_blocks": 5}
		}), 400, "slicing"},
		{"unreachable URI", "POST", "/v1/jobs", js, good(func(r map[string]any) { r["data"] = map[string]any{"uri": "https://127.0.0.1:1/data"} }), 422, "cannot reach host"},
		{"hash mismatch", "POST", "/v1/jobs", js, good(func(r map[string]any) {
			r["data"] = map[string]any{"uri": code.URI, "sha256": strings.Repeat("0", 63) + "1"}
		}), 422, "hash"},
		{"bad job ID", "GET", "/v1/jobs/not-a-job", "", nil, 400, "job ID"},
		{"bad job ID to cancel", "POST", "/v1/jobs/xyz/cancel", "", nil, 400, "job ID"},
		{"unknown job to cancel", "POST", idPath + "/cancel", "", nil, 404, "no such job"},
		{"unknown job", "GET", idPath, "", nil, 404, "no such job"},
		{"content too large", "POST", "/v1/content", bin, make([]byte, 4<<20+1), 413, "limit"},
		{"empty content", "POST", "/v1/content", bin, nil, 400, "empty"},
		{"content as JSON", "POST", "/v1/content", js, []byte(`{}`), 415, "application/octet-stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkBad(t, srv.URL, c.Token(), tc) })
	}
	// A streamed upload without a length is cut at the limit too.
	pr, pw := io.Pipe()
	go func() { pw.Write(make([]byte, 4<<20+10)); pw.Close() }()
	if _, err := c.Upload(ctx, pr); apiStatus(t, err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("streamed oversized upload: %v", err)
	}
	// A bootstrap node submits nothing.
	checkBad(t, boot.URL, bootClient.Token(), badCase{"bootstrap submit", "POST", "/v1/jobs", js, good(nil), 501, "does not submit"})
	// Nothing was published.
	if list, err := c.Jobs(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after bad requests the node lists %d jobs (%v)", len(list), err)
	}
}

func checkBad(t *testing.T, base, token string, tc badCase) {
	t.Helper()
	req, _ := http.NewRequest(tc.method, base+tc.url, bytes.NewReader(tc.body))
	req.Header.Set("Authorization", "Bearer "+token)
	if tc.contentType != "" {
		req.Header.Set("Content-Type", tc.contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("%s: body is not a JSON error: %v", tc.name, err)
	}
	if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.msg) {
		t.Fatalf("%s: status %d %q, want %d containing %q", tc.name, resp.StatusCode, e.Error, tc.status, tc.msg)
	}
}

// TestSubmitOnChain: with a chain, submitting funds the escrow, a price
// the wallet cannot pay is 402 and publishes nothing, and cancelling an
// open job aborts its escrow and credits the price back to the creator.
func TestSubmitOnChain(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1, Clients: 1, Chain: &localmesh.ChainOptions{}})
	client := m.Members[len(m.Members)-1]
	_, c := serve(t, client.Node)
	ctx := context.Background()
	id, err := c.ID(ctx)
	if err != nil || id.Escrow != strings.ToLower(m.Escrow.Address().Hex()) {
		t.Fatalf("id %+v (%v)", id, err)
	}
	code, err := c.Upload(ctx, bytes.NewReader(wordcount(t)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Upload(ctx, bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	req := apiv1.SubmitRequest{
		Code: apiv1.Source{URI: code.URI, SHA256: code.SHA256}, Data: apiv1.Source{URI: data.URI, SHA256: data.SHA256},
		Slicing:      apiv1.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 1},
		PriceWei:     new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18)).String(), // more than the wallet holds
		Requirements: apiv1.Requirements{MinVRAMMiB: 1 << 20},
	}
	if _, err := c.Submit(ctx, req); apiStatus(t, err) != http.StatusPaymentRequired {
		t.Fatalf("unaffordable job: %v", err)
	}
	if list, err := c.Jobs(ctx); err != nil || len(list) != 0 {
		t.Fatalf("an unfunded job was published: %d (%v)", len(list), err)
	}
	price := big.NewInt(7_000_000)
	req.PriceWei = price.String()
	job, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if job.State != apiv1.JobOpen {
		t.Fatalf("funded job is %s", job.State)
	}
	before, err := client.Escrow.CreditOf(ctx, client.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Cancel(ctx, job.ID)
	if err != nil || got.State != apiv1.JobCancelled {
		t.Fatalf("cancel: %v %+v", err, got)
	}
	after, err := client.Escrow.CreditOf(ctx, client.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if new(big.Int).Sub(after, before).Cmp(price) != 0 {
		t.Fatalf("credit went from %v to %v, want +%v", before, after, price)
	}
	jid, _ := jobs.ParseHash(job.ID)
	ej, err := m.Escrow.Job(ctx, escrow.JobKey(client.Wallet, common.Hash(jid)))
	if err != nil || ej.State.String() != "aborted" {
		t.Fatalf("escrow state %v (%v)", ej.State, err)
	}
}
